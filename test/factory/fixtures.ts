import type { PolicyPlan, RobotPlan } from '../../src/factory/assets/plan';

export const policyPlan = (): PolicyPlan => ({
  kind: 'policy_network',
  title: 'Belt pick policy',
  task: 'pick parts off a moving belt',
  observation: {
    tensor: 'observation',
    fields: [
      { name: 'joint_positions', size: 6, unit: 'rad' },
      { name: 'object_pose', size: 7, unit: 'm, quaternion' },
    ],
    size: 13,
  },
  action: { tensor: 'action', fields: [{ name: 'ee_delta', size: 6, unit: 'm, rad' }, { name: 'gripper', size: 1, unit: 'normalized' }], size: 7 },
  hidden_layers: [64, 64],
  activation: 'tanh',
  seed: 42,
  assumptions: [],
});

export const robotPlan = (): RobotPlan => ({
  kind: 'robot_description',
  title: 'Two link arm',
  robot_type: 'arm',
  dimensions: { dof: 2, reach_m: 0.6 },
  links: [
    { name: 'base_link', geometry: { shape: 'cylinder', radius: 0.08, length: 0.1 }, center: [0, 0, 0.05], mass_kg: 3 },
    { name: 'link_1', geometry: { shape: 'cylinder', radius: 0.04, length: 0.3 }, center: [0, 0, 0.15], mass_kg: 1.2 },
    { name: 'link_2', geometry: { shape: 'box', size: [0.05, 0.05, 0.3] }, center: [0, 0, 0.15], mass_kg: 0.8 },
  ],
  joints: [
    { name: 'joint_1', type: 'revolute', parent: 'base_link', child: 'link_1', origin_xyz: [0, 0, 0.1], axis: [0, 0, 1], limit: { lower: -3.14, upper: 3.14, effort: 40, velocity: 2 } },
    { name: 'joint_2', type: 'revolute', parent: 'link_1', child: 'link_2', origin_xyz: [0, 0, 0.3], axis: [0, 1, 0], limit: { lower: -1.5, upper: 1.5, effort: 20, velocity: 2 } },
  ],
  assumptions: ['payload not understood: assumed 1 kg'],
});
