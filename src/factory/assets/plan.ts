/**
 * The structured plan a generation job builds its artifact from. Analysis (sandbox rules or
 * the live upstream) only ever produces one of these; the bytes are always written by code
 * from it, so the same plan gives byte-identical files.
 */
export type AssetKind = 'policy_network' | 'robot_description';

/** One named slice of an observation or action vector. */
export interface SpaceField {
  name: string;
  size: number;
  unit: string;
}

export interface Space {
  /** The tensor name in the model: "observation" or "action". */
  tensor: string;
  fields: SpaceField[];
  /** Sum of the field sizes: the tensor's second dimension. */
  size: number;
}

export interface PolicyPlan {
  kind: 'policy_network';
  title: string;
  task: string;
  observation: Space;
  action: Space;
  hidden_layers: number[];
  activation: 'tanh' | 'relu';
  /** Seeds the initial weights, so a rebuild of the same plan writes the same bytes. */
  seed: number;
  assumptions: string[];
}

export type Vec3 = [number, number, number];

export type Geometry =
  | { shape: 'box'; size: Vec3 }
  | { shape: 'cylinder'; radius: number; length: number }
  | { shape: 'sphere'; radius: number };

export interface LinkPlan {
  name: string;
  geometry: Geometry;
  /** Where the geometry and centre of mass sit in the link's frame (a segment hangs off its joint). */
  center: Vec3;
  /** Turns the geometry (a wheel's cylinder lies on its side); its inertia turns with it. */
  rpy?: Vec3;
  mass_kg: number;
}

export type JointType = 'revolute' | 'continuous' | 'prismatic' | 'fixed';

export interface JointPlan {
  name: string;
  type: JointType;
  parent: string;
  child: string;
  origin_xyz: Vec3;
  axis: Vec3;
  /** Radians (revolute) or metres (prismatic); effort in N·m or N, velocity in rad/s or m/s. */
  limit?: { lower: number; upper: number; effort: number; velocity: number };
}

export interface RobotPlan {
  kind: 'robot_description';
  title: string;
  robot_type: 'arm' | 'differential_drive' | 'mobile_manipulator';
  /** The figures the structure was sized from (reach, payload, DoF, wheel size...). */
  dimensions: Record<string, number | string>;
  links: LinkPlan[];
  joints: JointPlan[];
  assumptions: string[];
}

export type AssetPlan = PolicyPlan | RobotPlan;
