import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { capped, expect, Inspection, InspectionError } from '../inspection';
import type { RangedFile } from '../ranged-file';

/**
 * Robot descriptions (URDF, xacro, SDF) and COLLADA meshes, parsed with fast-xml-parser.
 * XML entities are never expanded: a document declaring any (an entity bomb, an external
 * entity reading a local file) is refused before parsing, and the parser is told not to
 * process entities nor nest deeper than MAX_DEPTH.
 */
const MAX_DEPTH = 256;
const MOVING: Record<string, number> = { revolute: 1, continuous: 1, prismatic: 1, planar: 2, floating: 6 };
export const URDF_JOINT_TYPES = [...Object.keys(MOVING), 'fixed'];

const ELEMENT_LISTS = ['link', 'joint', 'visual', 'collision', 'model', 'include', 'xacro:macro', 'xacro:include', 'mesh'];
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  processEntities: false,
  htmlEntities: false,
  maxNestedTags: MAX_DEPTH,
  // Elements only: <parent link="..."/> has an attribute of the same name as <link>.
  isArray: (name, _path, _leaf, isAttribute) => !isAttribute && ELEMENT_LISTS.includes(name),
});

/** Well-formed XML with no entity declarations, parsed; what is wrong otherwise. */
export function parseXml(xml: string): Record<string, any> {
  if (/<!ENTITY/i.test(xml)) throw new InspectionError('unsafe_xml', 'it declares XML entities (<!ENTITY>), which are refused: entity expansion and external entities are never processed');
  if (/<!DOCTYPE[^>]*\[/i.test(xml)) throw new InspectionError('unsafe_xml', 'it has a DOCTYPE with an internal subset, which is refused');
  const wellFormed = XMLValidator.validate(xml);
  expect(wellFormed === true, `it is not well-formed XML: ${wellFormed === true ? '' : `${wellFormed.err.msg} (line ${wellFormed.err.line})`}`);
  try {
    return parser.parse(xml);
  } catch (error) {
    expect(false, `it is not parseable XML: ${(error as Error).message}`);
  }
}

async function readText(file: RangedFile): Promise<string> {
  if (file.size > file.limits.maxReadBytes) throw new InspectionError('inspection_limit_exceeded', `it has ${file.size} bytes, more than an XML document may have to be inspected`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(await file.exactly(0, file.size, 'the document'));
  } catch (error) {
    if (error instanceof InspectionError) throw error;
    expect(false, 'it is not UTF-8 text');
  }
}

export interface UrdfSummary {
  robot: string;
  root: string;
  links: number;
  joints: number;
  joints_by_type: Record<string, number>;
  degrees_of_freedom: number;
  meshes: string[];
}

/**
 * A URDF's structure, as urdfdom requires it: a named <robot>, uniquely named links, joints
 * of known types between existing links, and one tree (one root, every other link the
 * child of exactly one joint, all reachable). Returns the summary and the parsed robot
 * (the factory's validator checks the physics of generated robots on it).
 */
export function readUrdf(xml: string): { summary: UrdfSummary; robot: Record<string, any> } {
  const robot = parseXml(xml).robot;
  expect(robot && typeof robot.name === 'string' && robot.name, 'it has no <robot name="...">');
  const links: any[] = robot.link ?? [];
  const joints: any[] = robot.joint ?? [];
  expect(links.length > 0, 'its robot has no links');
  const names = new Set<string>();
  for (const link of links) {
    expect(typeof link.name === 'string' && link.name && !names.has(link.name), `link name "${link.name}" is missing or repeated`);
    names.add(link.name);
  }
  const parentOf = new Map<string, string>();
  const children = new Map<string, string[]>();
  const jointNames = new Set<string>();
  const byType: Record<string, number> = {};
  let dof = 0;
  for (const joint of joints) {
    const name = joint.name;
    expect(typeof name === 'string' && name && !jointNames.has(name), `joint name "${name}" is missing or repeated`);
    jointNames.add(name);
    expect(URDF_JOINT_TYPES.includes(joint.type), `joint ${name} has unknown type "${joint.type}"`);
    const parent = joint.parent?.link;
    const child = joint.child?.link;
    expect(names.has(parent), `joint ${name} names parent link "${parent}", which does not exist`);
    expect(names.has(child), `joint ${name} names child link "${child}", which does not exist`);
    expect(parent !== child, `joint ${name} joins link ${parent} to itself`);
    expect(!parentOf.has(child), `link ${child} is the child of more than one joint`);
    parentOf.set(child, parent);
    children.set(parent, [...(children.get(parent) ?? []), child]);
    byType[joint.type] = (byType[joint.type] ?? 0) + 1;
    dof += MOVING[joint.type] ?? 0;
  }
  const roots = [...names].filter((n) => !parentOf.has(n));
  expect(roots.length === 1, `its links form ${roots.length} trees (roots: ${roots.join(', ') || 'none'}), not one`);
  const reached = new Set<string>();
  const queue = [roots[0]];
  while (queue.length) {
    const link = queue.shift()!;
    reached.add(link);
    for (const child of children.get(link) ?? []) if (!reached.has(child)) queue.push(child);
  }
  expect(reached.size === names.size, `links ${[...names].filter((n) => !reached.has(n)).join(', ')} are not connected to ${roots[0]} (a cycle)`);
  const meshes = new Set<string>();
  for (const link of links) for (const part of [...(link.visual ?? []), ...(link.collision ?? [])]) for (const mesh of part?.geometry?.mesh ?? []) if (mesh?.filename) meshes.add(String(mesh.filename));
  return {
    summary: { robot: robot.name, root: roots[0], links: links.length, joints: joints.length, joints_by_type: byType, degrees_of_freedom: dof, meshes: capped([...meshes].sort()) },
    robot,
  };
}

export async function inspectUrdf(file: RangedFile): Promise<Inspection> {
  return { format: 'urdf', ...readUrdf(await readText(file)).summary };
}

/**
 * xacro is URDF with macros that only xacro itself expands (it runs Python expressions), so
 * it is checked as well-formed XML with a <robot> root; what is written literally is counted.
 */
export async function inspectXacro(file: RangedFile): Promise<Inspection> {
  const robot = parseXml(await readText(file)).robot;
  expect(robot && typeof robot === 'object', 'it has no <robot> root element');
  return {
    format: 'xacro',
    robot: robot.name ?? null,
    links: (robot.link ?? []).length,
    joints: (robot.joint ?? []).length,
    macros: (robot['xacro:macro'] ?? []).length,
    includes: capped((robot['xacro:include'] ?? []).map((i: any) => String(i.filename ?? ''))),
  };
}

/** SDFormat: an <sdf version> root with models (in a world or not), their links and joints. */
export async function inspectSdf(file: RangedFile): Promise<Inspection> {
  const sdf = parseXml(await readText(file)).sdf;
  expect(sdf && typeof sdf === 'object', 'it has no <sdf> root element');
  const worlds = sdf.world ? (Array.isArray(sdf.world) ? sdf.world : [sdf.world]) : [];
  const models: any[] = [...(sdf.model ?? []), ...worlds.flatMap((w: any) => w.model ?? [])];
  const joints: Record<string, number> = {};
  for (const model of models) for (const joint of model.joint ?? []) joints[joint.type] = (joints[joint.type] ?? 0) + 1;
  return {
    format: 'sdf',
    version: sdf.version ?? null,
    models: capped(models.map((m) => ({ name: m.name ?? null, links: (m.link ?? []).length, joints: (m.joint ?? []).length }))),
    joints_by_type: joints,
  };
}

/** COLLADA: a <COLLADA> root; its geometries are counted. */
export async function inspectCollada(file: RangedFile): Promise<Inspection> {
  const doc = parseXml(await readText(file)).COLLADA;
  expect(doc && typeof doc === 'object', 'it has no <COLLADA> root element');
  const geometries = doc.library_geometries?.geometry;
  return { format: 'collada', version: doc.version ?? null, geometries: geometries ? (Array.isArray(geometries) ? geometries.length : 1) : 0 };
}
