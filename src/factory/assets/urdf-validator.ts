import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { check } from './invalid-artifact';

const MOVING = ['revolute', 'continuous', 'prismatic', 'floating', 'planar'];
const JOINT_TYPES = [...MOVING, 'fixed'];
const LIMITED = ['revolute', 'prismatic'];

export interface UrdfSummary {
  robot: string;
  root: string;
  links: number;
  joints: number;
  movable_joints: number;
  total_mass_kg: number;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  // Elements only: <parent link="..."/> has an attribute of the same name as <link>.
  isArray: (name, _path, _leaf, isAttribute) => !isAttribute && ['link', 'joint', 'visual', 'collision'].includes(name),
});

const numbers = (text: unknown, count: number, what: string): number[] => {
  const values = String(text ?? '').trim().split(/\s+/).map(Number);
  check(values.length === count && values.every(Number.isFinite), `${what} must be ${count} numbers, not "${String(text ?? '')}"`);
  return values;
};

const positive = (text: unknown, what: string): number => {
  const value = Number(text);
  check(Number.isFinite(value) && value > 0, `${what} must be a positive number, not "${String(text ?? '')}"`);
  return value;
};

function checkGeometry(element: any, what: string): void {
  const geometry = element?.geometry;
  check(geometry, `${what} has no geometry`);
  if (geometry.box) numbers(geometry.box.size, 3, `${what} box size`).forEach((v) => check(v > 0, `${what} box size must be positive`));
  else if (geometry.cylinder) {
    positive(geometry.cylinder.radius, `${what} cylinder radius`);
    positive(geometry.cylinder.length, `${what} cylinder length`);
  } else if (geometry.sphere) positive(geometry.sphere.radius, `${what} sphere radius`);
  else check(geometry.mesh?.filename, `${what} geometry is not a box, cylinder, sphere or mesh`);
}

/**
 * A symmetric 3x3 inertia is physically possible when it is positive definite (every
 * leading principal minor positive, Sylvester) and its principal moments satisfy the
 * triangle inequality; checked on the matrix as written, products of inertia included.
 */
function checkInertia(inertia: any, what: string): void {
  check(inertia, `${what} has no inertia`);
  const [xx, xy, xz, yy, yz, zz] = ['ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'].map((k) => Number(inertia[k] ?? (k.length === 3 && k[1] !== k[2] ? 0 : NaN)));
  check([xx, xy, xz, yy, yz, zz].every(Number.isFinite), `${what} inertia has a missing or non-numeric entry`);
  const minor2 = xx * yy - xy * xy;
  const det = xx * (yy * zz - yz * yz) - xy * (xy * zz - yz * xz) + xz * (xy * yz - yy * xz);
  check(xx > 0 && minor2 > 0 && det > 0, `${what} inertia is not positive definite`);
  check(xx + yy >= zz && xx + zz >= yy && yy + zz >= xx, `${what} inertia violates the triangle inequality`);
}

/**
 * Parses robot.urdf with fast-xml-parser and checks what a simulator needs: links with
 * positive masses, positive-definite inertia and visual and collision geometry; joints of
 * known types between existing links with a non-zero axis and sane limits; and a single
 * tree (one root, every other link the child of exactly one joint, all reachable).
 */
export function validateUrdf(xml: string): UrdfSummary {
  const wellFormed = XMLValidator.validate(xml);
  check(wellFormed === true, `robot.urdf is not well-formed XML: ${wellFormed === true ? '' : wellFormed.err.msg}`);
  const robot = parser.parse(xml).robot;
  check(robot && typeof robot.name === 'string' && robot.name, 'robot.urdf has no <robot name="...">');
  const links: any[] = robot.link ?? [];
  const joints: any[] = robot.joint ?? [];
  check(links.length > 0, 'robot.urdf has no links');

  const names = new Set<string>();
  let totalMass = 0;
  for (const link of links) {
    const name = link.name;
    check(typeof name === 'string' && name && !names.has(name), `link name "${name}" is missing or repeated`);
    names.add(name);
    check(link.inertial, `link ${name} has no inertial`);
    totalMass += positive(link.inertial.mass?.value, `link ${name} mass`);
    checkInertia(link.inertial.inertia, `link ${name}`);
    check(link.visual?.length, `link ${name} has no visual`);
    check(link.collision?.length, `link ${name} has no collision`);
    link.visual.forEach((v: any) => checkGeometry(v, `link ${name} visual`));
    link.collision.forEach((c: any) => checkGeometry(c, `link ${name} collision`));
  }

  const parentOf = new Map<string, string>();
  const children = new Map<string, string[]>();
  const jointNames = new Set<string>();
  for (const joint of joints) {
    const name = joint.name;
    check(typeof name === 'string' && name && !jointNames.has(name), `joint name "${name}" is missing or repeated`);
    jointNames.add(name);
    check(JOINT_TYPES.includes(joint.type), `joint ${name} has unknown type "${joint.type}"`);
    const parent = joint.parent?.link;
    const child = joint.child?.link;
    check(names.has(parent), `joint ${name} names parent link "${parent}", which does not exist`);
    check(names.has(child), `joint ${name} names child link "${child}", which does not exist`);
    check(parent !== child, `joint ${name} joins link ${parent} to itself`);
    check(!parentOf.has(child), `link ${child} is the child of more than one joint`);
    parentOf.set(child, parent);
    children.set(parent, [...(children.get(parent) ?? []), child]);
    if (joint.origin?.xyz !== undefined) numbers(joint.origin.xyz, 3, `joint ${name} origin`);
    if (MOVING.includes(joint.type)) {
      const axis = numbers(joint.axis?.xyz ?? '1 0 0', 3, `joint ${name} axis`);
      check(Math.hypot(...axis) > 1e-9, `joint ${name} has a zero axis`);
    }
    if (LIMITED.includes(joint.type)) {
      const limit = joint.limit;
      check(limit, `joint ${name} (${joint.type}) has no limit`);
      const lower = Number(limit.lower ?? 0);
      const upper = Number(limit.upper ?? 0);
      check(Number.isFinite(lower) && Number.isFinite(upper) && lower < upper, `joint ${name} limit lower ${limit.lower} is not below upper ${limit.upper}`);
      positive(limit.effort, `joint ${name} effort limit`);
      positive(limit.velocity, `joint ${name} velocity limit`);
    }
  }

  const roots = [...names].filter((n) => !parentOf.has(n));
  check(roots.length === 1, `the links form ${roots.length} trees (roots: ${roots.join(', ') || 'none'}), not one`);
  const reached = new Set<string>();
  const queue = [roots[0]];
  while (queue.length) {
    const link = queue.shift()!;
    reached.add(link);
    for (const child of children.get(link) ?? []) if (!reached.has(child)) queue.push(child);
  }
  check(reached.size === names.size, `links ${[...names].filter((n) => !reached.has(n)).join(', ')} are not connected to ${roots[0]} (a cycle)`);

  return {
    robot: robot.name,
    root: roots[0],
    links: links.length,
    joints: joints.length,
    movable_joints: joints.filter((j) => MOVING.includes(j.type)).length,
    total_mass_kg: Math.round(totalMass * 1000) / 1000,
  };
}
