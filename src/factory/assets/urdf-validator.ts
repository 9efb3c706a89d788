import { InspectionError } from '../../inspection/inspection';
import { readUrdf } from '../../inspection/formats/robot-xml';
import { check } from './invalid-artifact';

const MOVING = ['revolute', 'continuous', 'prismatic', 'floating', 'planar'];
const LIMITED = ['revolute', 'prismatic'];

export interface UrdfSummary {
  robot: string;
  root: string;
  links: number;
  joints: number;
  movable_joints: number;
  total_mass_kg: number;
}

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
 * A generated URDF: its structure is checked by the URDF inspector every published
 * .urdf goes through (src/inspection, one validator per format: well-formed XML with no
 * entities, named links, joints of known types between existing links, one tree); a
 * generated robot must also be physically plausible for a simulator: links with positive
 * masses, positive-definite inertia and visual and collision geometry; moving joints with
 * a non-zero axis, limited ones with sane limits.
 */
export function validateUrdf(xml: string): UrdfSummary {
  let read: ReturnType<typeof readUrdf>;
  try {
    read = readUrdf(xml);
  } catch (error) {
    if (error instanceof InspectionError) check(false, `robot.urdf: ${error.message}`);
    throw error;
  }
  const { summary, robot } = read;
  const links: any[] = robot.link ?? [];
  const joints: any[] = robot.joint ?? [];
  let totalMass = 0;
  for (const link of links) {
    const name = link.name;
    check(link.inertial, `link ${name} has no inertial`);
    totalMass += positive(link.inertial.mass?.value, `link ${name} mass`);
    checkInertia(link.inertial.inertia, `link ${name}`);
    check(link.visual?.length, `link ${name} has no visual`);
    check(link.collision?.length, `link ${name} has no collision`);
    link.visual.forEach((v: any) => checkGeometry(v, `link ${name} visual`));
    link.collision.forEach((c: any) => checkGeometry(c, `link ${name} collision`));
  }
  for (const joint of joints) {
    const name = joint.name;
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
  return {
    robot: summary.robot,
    root: summary.root,
    links: summary.links,
    joints: summary.joints,
    movable_joints: joints.filter((j) => MOVING.includes(j.type)).length,
    total_mass_kg: Math.round(totalMass * 1000) / 1000,
  };
}
