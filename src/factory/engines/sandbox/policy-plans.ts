import type { PolicyPlan, SpaceField } from '../../assets/plan';
import { mentions, readDof, readHiddenLayers } from './prompt-reading';

const sum = (fields: SpaceField[]) => fields.reduce((n, f) => n + f.size, 0);

/**
 * The observation and action spaces a task description implies, by the words it uses:
 * a gripper adds its joint positions and width and a gripper command, an object or part
 * its pose, a belt or conveyor its speed, pick-and-place end-effector deltas.
 */
export function policyPlan(prompt: string, seed: number, assumptions: string[]): PolicyPlan {
  const dof = readDof(prompt);
  const joints = dof ?? 6;
  if (dof === undefined) assumptions.push(`arm degrees of freedom not understood: assumed ${joints} joints`);
  const gripper = mentions(prompt, /gripper|finger|grasp|pick/);
  const object = mentions(prompt, /object|part|item|box|pick|grasp|place/);
  const conveyor = mentions(prompt, /belt|conveyor/);
  const cartesian = mentions(prompt, /pick|place|end[- ]effector|cartesian|reach/);

  const observation: SpaceField[] = [
    { name: 'joint_positions', size: joints, unit: 'rad' },
    { name: 'joint_velocities', size: joints, unit: 'rad/s' },
  ];
  if (gripper) observation.push({ name: 'gripper_finger_positions', size: 2, unit: 'm' }, { name: 'gripper_width', size: 1, unit: 'm' });
  if (object) observation.push({ name: 'object_pose', size: 7, unit: 'm (xyz), quaternion (xyzw)' });
  if (conveyor) observation.push({ name: 'conveyor_speed', size: 1, unit: 'm/s' });

  const action: SpaceField[] = cartesian
    ? [{ name: 'end_effector_delta', size: 6, unit: 'm (xyz), rad (roll pitch yaw) per step' }]
    : [{ name: 'joint_velocity_targets', size: joints, unit: 'rad/s' }];
  if (gripper) action.push({ name: 'gripper_command', size: 1, unit: '0 open .. 1 closed' });

  const hidden = readHiddenLayers(prompt);
  if (!hidden) assumptions.push('network layers not given: assumed an MLP with two hidden layers of 256');
  const relu = mentions(prompt, /\brelu\b/);
  const task = prompt.trim().replace(/\s+/g, ' ').slice(0, 300);
  return {
    kind: 'policy_network',
    title: mentions(prompt, /pick|place/) ? 'Pick-and-place policy' : mentions(prompt, /walk|locomotion|legged/) ? 'Locomotion policy' : 'Control policy',
    task,
    observation: { tensor: 'observation', fields: observation, size: sum(observation) },
    action: { tensor: 'action', fields: action, size: sum(action) },
    hidden_layers: hidden ?? [256, 256],
    activation: relu ? 'relu' : 'tanh',
    seed,
    assumptions,
  };
}
