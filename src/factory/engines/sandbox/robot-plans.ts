import type { JointPlan, LinkPlan, RobotPlan, Vec3 } from '../../assets/plan';

const G = 9.81;
const round = (value: number, places = 4) => Math.round(value * 10 ** places) / 10 ** places;

export interface ArmSpec {
  dof: number;
  reach_m: number;
  payload_kg: number;
  gripper: boolean;
}

export interface BaseSpec {
  wheel_radius_m: number;
  length_m: number;
  width_m: number;
  payload_kg: number;
}

/**
 * Share of the reach per segment: a short shoulder, a long upper arm and forearm, short
 * wrist segments; normalised over the segments the DoF calls for.
 */
const SEGMENT_WEIGHTS = [0.12, 0.38, 0.34, 0.06, 0.05, 0.05];
/** Joint axes in the usual order: base yaw, shoulder and elbow pitch, then wrist roll/pitch/roll. */
const AXES: Vec3[] = [[0, 0, 1], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0], [0, 0, 1]];

/** An arm as a serial chain of cylinders, sized from reach and payload; `prefix` keeps names unique on a mobile base. */
export function armParts(spec: ArmSpec, prefix = ''): { links: LinkPlan[]; joints: JointPlan[]; base: string } {
  const weights = Array.from({ length: spec.dof }, (_, i) => SEGMENT_WEIGHTS[i] ?? 0.05);
  const total = weights.reduce((a, b) => a + b, 0);
  const lengths = weights.map((w) => round((w / total) * spec.reach_m));
  // Stiffer, heavier segments for heavier payloads, tapering towards the tool.
  const scale = Math.cbrt(Math.max(spec.payload_kg, 0.1));
  const base = `${prefix}base_link`;
  const links: LinkPlan[] = [
    { name: base, geometry: { shape: 'cylinder', radius: round(0.07 * scale), length: 0.1 }, center: [0, 0, 0.05], mass_kg: round(2 + 1.5 * scale) },
  ];
  const joints: JointPlan[] = [];
  const masses = lengths.map((l, i) => round(Math.max(0.2, l * (3 + 2 * scale) * (1 - i * 0.08))));
  let parent = base;
  let parentLength = 0.1;
  lengths.forEach((length, i) => {
    const name = `${prefix}link_${i + 1}`;
    const radius = round(Math.max(0.015, 0.04 * scale * (1 - i * 0.1)));
    links.push({ name, geometry: { shape: 'cylinder', radius, length }, center: [0, 0, round(length / 2)], mass_kg: masses[i] });
    // Torque to hold everything beyond this joint at full stretch, with a 50% margin.
    const outboard = lengths.slice(i).reduce((a, b) => a + b, 0);
    const carried = spec.payload_kg + masses.slice(i + 1).reduce((a, b) => a + b, 0) + masses[i] / 2;
    const axis = AXES[i % AXES.length];
    const roll = axis[2] === 1;
    joints.push({
      name: `${prefix}joint_${i + 1}`,
      type: 'revolute',
      parent,
      child: name,
      origin_xyz: [0, 0, round(parentLength)],
      axis,
      limit: { lower: roll ? -3.1416 : -2.0944, upper: roll ? 3.1416 : 2.0944, effort: round(Math.max(1, carried * G * outboard * 1.5), 2), velocity: i < 3 ? 2.0 : 3.0 },
    });
    parent = name;
    parentLength = length;
  });
  if (spec.gripper) {
    const palm = `${prefix}gripper_base`;
    links.push({ name: palm, geometry: { shape: 'box', size: [0.06, 0.12, 0.04] }, center: [0, 0, 0.02], mass_kg: 0.3 });
    joints.push({ name: `${prefix}gripper_mount`, type: 'fixed', parent, child: palm, origin_xyz: [0, 0, round(parentLength)], axis: [0, 0, 1] });
    for (const [side, sign] of [['left', 1], ['right', -1]] as const) {
      const finger = `${prefix}finger_${side}`;
      links.push({ name: finger, geometry: { shape: 'box', size: [0.02, 0.015, 0.06] }, center: [0, 0, 0.03], mass_kg: 0.05 });
      joints.push({
        name: `${prefix}finger_${side}_joint`,
        type: 'prismatic',
        parent: palm,
        child: finger,
        origin_xyz: [0, round(sign * 0.01), 0.04],
        axis: [0, sign, 0],
        // Each finger opens 4 cm; grip force grows with the payload it must hold.
        limit: { lower: 0, upper: 0.04, effort: round(20 + 10 * spec.payload_kg, 2), velocity: 0.1 },
      });
    }
  }
  return { links, joints, base };
}

/** A differential-drive base: a box chassis, two driven wheels and a caster. */
export function baseParts(spec: BaseSpec): { links: LinkPlan[]; joints: JointPlan[]; top: number } {
  const height = 0.15;
  const r = spec.wheel_radius_m;
  const links: LinkPlan[] = [
    { name: 'base_link', geometry: { shape: 'box', size: [spec.length_m, spec.width_m, height] }, center: [0, 0, 0], mass_kg: round(8 + 0.2 * spec.payload_kg) },
  ];
  const joints: JointPlan[] = [];
  for (const [side, sign] of [['left', 1], ['right', -1]] as const) {
    links.push({ name: `${side}_wheel`, geometry: { shape: 'cylinder', radius: r, length: 0.04 }, center: [0, 0, 0], rpy: [1.5708, 0, 0], mass_kg: round(0.5 + 4 * r) });
    joints.push({
      name: `${side}_wheel_joint`,
      type: 'continuous',
      parent: 'base_link',
      child: `${side}_wheel`,
      origin_xyz: [0, round(sign * (spec.width_m / 2 + 0.03)), round(r - height / 2 - 0.02)],
      axis: [0, 1, 0],
      limit: { lower: 0, upper: 0, effort: round(5 + 2 * spec.payload_kg * r, 2), velocity: round(1.5 / r, 2) },
    });
  }
  // The caster's bottom touches the ground where the wheels do.
  links.push({ name: 'caster', geometry: { shape: 'sphere', radius: round(r / 2) }, center: [0, 0, 0], mass_kg: 0.2 });
  joints.push({ name: 'caster_joint', type: 'fixed', parent: 'base_link', child: 'caster', origin_xyz: [round(-spec.length_m / 2 + r / 2), 0, round(r / 2 - height / 2 - 0.02)], axis: [0, 0, 1] });
  return { links, joints, top: height / 2 };
}

export function armPlan(title: string, spec: ArmSpec, assumptions: string[]): RobotPlan {
  const { links, joints } = armParts(spec);
  return {
    kind: 'robot_description',
    title,
    robot_type: 'arm',
    dimensions: { dof: spec.dof, reach_m: spec.reach_m, payload_kg: spec.payload_kg, gripper: spec.gripper ? 'parallel, 2 fingers' : 'none' },
    links,
    joints,
    assumptions,
  };
}

export function differentialDrivePlan(title: string, spec: BaseSpec, assumptions: string[]): RobotPlan {
  const { links, joints } = baseParts(spec);
  return {
    kind: 'robot_description',
    title,
    robot_type: 'differential_drive',
    dimensions: { wheel_radius_m: spec.wheel_radius_m, length_m: spec.length_m, width_m: spec.width_m, payload_kg: spec.payload_kg },
    links,
    joints,
    assumptions,
  };
}

/** A base with an arm bolted on top through a fixed joint. */
export function mobileManipulatorPlan(title: string, base: BaseSpec, arm: ArmSpec, assumptions: string[]): RobotPlan {
  const chassis = baseParts(base);
  const mounted = armParts(arm, 'arm_');
  return {
    kind: 'robot_description',
    title,
    robot_type: 'mobile_manipulator',
    dimensions: { wheel_radius_m: base.wheel_radius_m, length_m: base.length_m, width_m: base.width_m, dof: arm.dof, reach_m: arm.reach_m, payload_kg: arm.payload_kg },
    links: [...chassis.links, ...mounted.links],
    joints: [
      ...chassis.joints,
      { name: 'arm_mount', type: 'fixed', parent: 'base_link', child: mounted.base, origin_xyz: [round(base.length_m / 4), 0, chassis.top], axis: [0, 0, 1] },
      ...mounted.joints,
    ],
    assumptions,
  };
}
