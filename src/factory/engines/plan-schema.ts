import type { AssetPlan, Geometry, JointPlan, LinkPlan, PolicyPlan, RobotPlan, Space, Vec3 } from '../assets/plan';
import { EngineFailedError, Question } from './engine';

/**
 * Checks a model server's JSON against the plan shapes before anything is built from it.
 * Bounds keep a plan buildable on our machines (no 10^6-wide layers); the built artifact is
 * validated again by code (assets/), so this only has to reject what cannot be built.
 */
const fail = (path: string, why: string): never => {
  throw new EngineFailedError(`The model server's plan is not valid: ${path} ${why}.`);
};

const obj = (v: unknown, path: string): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : fail(path, 'must be an object'));
const arr = (v: unknown, path: string, max: number, min = 1): unknown[] => (Array.isArray(v) && v.length >= min && v.length <= max ? v : fail(path, `must be an array of ${min} to ${max} items`));
const str = (v: unknown, path: string, max = 200): string => (typeof v === 'string' && v.trim() && v.length <= max ? v : fail(path, `must be a non-empty string of at most ${max} characters`));
const name = (v: unknown, path: string): string => (typeof v === 'string' && /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(v) ? v : fail(path, 'must be an identifier'));
const num = (v: unknown, path: string, min: number, max: number): number => (typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max ? v : fail(path, `must be a number from ${min} to ${max}`));
const int = (v: unknown, path: string, min: number, max: number): number => (Number.isInteger(v) ? num(v, path, min, max) : fail(path, 'must be an integer'));
const vec3 = (v: unknown, path: string, min = -100, max = 100): Vec3 => {
  const a = arr(v, path, 3);
  if (a.length !== 3) fail(path, 'must hold 3 numbers');
  return a.map((x, i) => num(x, `${path}[${i}]`, min, max)) as Vec3;
};
const oneOf = <T extends string>(v: unknown, path: string, values: readonly T[]): T => (values.includes(v as T) ? (v as T) : fail(path, `must be one of ${values.join(', ')}`));

function space(v: unknown, path: string, tensor: string): Space {
  const o = obj(v, path);
  const fields = arr(o.fields, `${path}.fields`, 32).map((f, i) => {
    const fo = obj(f, `${path}.fields[${i}]`);
    return { name: name(fo.name, `${path}.fields[${i}].name`), size: int(fo.size, `${path}.fields[${i}].size`, 1, 1024), unit: str(fo.unit, `${path}.fields[${i}].unit`, 80) };
  });
  return { tensor, fields, size: fields.reduce((n, f) => n + f.size, 0) };
}

function geometry(v: unknown, path: string): Geometry {
  const o = obj(v, path);
  switch (oneOf(o.shape, `${path}.shape`, ['box', 'cylinder', 'sphere'] as const)) {
    case 'box':
      return { shape: 'box', size: vec3(o.size, `${path}.size`, 0.001, 20) };
    case 'cylinder':
      return { shape: 'cylinder', radius: num(o.radius, `${path}.radius`, 0.001, 10), length: num(o.length, `${path}.length`, 0.001, 20) };
    case 'sphere':
      return { shape: 'sphere', radius: num(o.radius, `${path}.radius`, 0.001, 10) };
  }
}

function link(v: unknown, path: string): LinkPlan {
  const o = obj(v, path);
  return { name: name(o.name, `${path}.name`), geometry: geometry(o.geometry, `${path}.geometry`), center: o.center === undefined ? [0, 0, 0] : vec3(o.center, `${path}.center`), mass_kg: num(o.mass_kg, `${path}.mass_kg`, 0.001, 10000) };
}

function joint(v: unknown, path: string): JointPlan {
  const o = obj(v, path);
  const type = oneOf(o.type, `${path}.type`, ['revolute', 'continuous', 'prismatic', 'fixed'] as const);
  const j: JointPlan = { name: name(o.name, `${path}.name`), type, parent: name(o.parent, `${path}.parent`), child: name(o.child, `${path}.child`), origin_xyz: vec3(o.origin_xyz, `${path}.origin_xyz`), axis: type === 'fixed' ? [0, 0, 1] : vec3(o.axis, `${path}.axis`, -1, 1) };
  if (type === 'revolute' || type === 'prismatic') {
    const l = obj(o.limit, `${path}.limit`);
    j.limit = { lower: num(l.lower, `${path}.limit.lower`, -100, 100), upper: num(l.upper, `${path}.limit.upper`, -100, 100), effort: num(l.effort, `${path}.limit.effort`, 0.001, 1e6), velocity: num(l.velocity, `${path}.limit.velocity`, 0.001, 1e4) };
  }
  return j;
}

export function parsePlan(value: unknown, seed: number): AssetPlan {
  const o = obj(value, 'plan');
  const assumptions = o.assumptions === undefined ? [] : arr(o.assumptions, 'plan.assumptions', 50).map((a, i) => str(a, `plan.assumptions[${i}]`, 300));
  if (oneOf(o.kind, 'plan.kind', ['policy_network', 'robot_description'] as const) === 'policy_network') {
    const plan: PolicyPlan = {
      kind: 'policy_network',
      title: str(o.title, 'plan.title', 120),
      task: str(o.task, 'plan.task', 300),
      observation: space(o.observation, 'plan.observation', 'observation'),
      action: space(o.action, 'plan.action', 'action'),
      hidden_layers: arr(o.hidden_layers, 'plan.hidden_layers', 8).map((w, i) => int(w, `plan.hidden_layers[${i}]`, 1, 2048)),
      activation: oneOf(o.activation, 'plan.activation', ['tanh', 'relu'] as const),
      // Weights are seeded by us from the prompt, never by the model server.
      seed,
      assumptions,
    };
    return plan;
  }
  const dimensions = obj(o.dimensions ?? {}, 'plan.dimensions');
  const plan: RobotPlan = {
    kind: 'robot_description',
    title: str(o.title, 'plan.title', 120),
    robot_type: oneOf(o.robot_type, 'plan.robot_type', ['arm', 'differential_drive', 'mobile_manipulator'] as const),
    dimensions: Object.fromEntries(Object.entries(dimensions).filter(([, v]) => typeof v === 'number' || typeof v === 'string').slice(0, 20)) as Record<string, number | string>,
    links: arr(o.links, 'plan.links', 64).map((l, i) => link(l, `plan.links[${i}]`)),
    // A single-link robot has no joints; the URDF checks decide whether the links form one tree.
    joints: (o.joints === undefined ? [] : arr(o.joints, 'plan.joints', 64, 0)).map((j, i) => joint(j, `plan.joints[${i}]`)),
    assumptions,
  };
  return plan;
}

export function parseQuestions(value: unknown): { kind?: AssetPlan['kind']; questions: Question[] } {
  const o = obj(value, 'analysis');
  const kind = o.kind === null || o.kind === undefined ? undefined : oneOf(o.kind, 'analysis.kind', ['policy_network', 'robot_description'] as const);
  const questions = (o.questions === undefined ? [] : arr(o.questions, 'analysis.questions', 5, 0)).map((q, i) => {
    const qo = obj(q, `analysis.questions[${i}]`);
    return { id: name(qo.id, `analysis.questions[${i}].id`), question: str(qo.question, `analysis.questions[${i}].question`, 500) };
  });
  return { kind, questions };
}
