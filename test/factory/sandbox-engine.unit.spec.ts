import { buildArtifact, sha256, validateArtifact } from '../../src/factory/assets/artifact';
import type { PolicyPlan, RobotPlan } from '../../src/factory/assets/plan';
import { DOF_QUESTION, KIND_QUESTION, SandboxFactoryEngine } from '../../src/factory/engines/sandbox-engine';

const engine = new SandboxFactoryEngine();
const BELT = 'a pick-and-place policy for a two-finger gripper taking parts off a moving belt, as ONNX';
const ARM = 'a 6-DoF arm with a parallel gripper, 0.9 m reach, 5 kg payload';

describe('analysis', () => {
  test('reads the kind and asks nothing when the prompt says enough', async () => {
    expect(await engine.analyze(BELT)).toEqual({ kind: 'policy_network', questions: [] });
    expect(await engine.analyze(ARM)).toEqual({ kind: 'robot_description', questions: [] });
    expect(await engine.analyze('a differential-drive base for a warehouse')).toEqual({ kind: 'robot_description', questions: [] });
  });

  test('an arm without DoF is a question; no kind asks the kind (and DoF, in the same round)', async () => {
    expect((await engine.analyze('a robot arm for welding')).questions).toEqual([DOF_QUESTION]);
    expect((await engine.analyze('something for my lab')).questions).toEqual([KIND_QUESTION, DOF_QUESTION]);
  });
});

describe('planning', () => {
  test('the belt policy names its spaces, sizes and units', async () => {
    const plan = (await engine.plan(BELT, [], [])) as PolicyPlan;
    expect(plan.kind).toBe('policy_network');
    expect(plan.observation.fields.map((f) => f.name)).toEqual(['joint_positions', 'joint_velocities', 'gripper_finger_positions', 'gripper_width', 'object_pose', 'conveyor_speed']);
    expect(plan.action.fields.map((f) => f.name)).toEqual(['end_effector_delta', 'gripper_command']);
    expect(plan.observation.size).toBe(6 + 6 + 2 + 1 + 7 + 1);
    expect(plan.action.size).toBe(7);
    expect(plan.hidden_layers).toEqual([256, 256]);
  });

  test('the arm reads DoF, reach and payload; its defaults are stated', async () => {
    const plan = (await engine.plan(ARM, [], [])) as RobotPlan;
    expect(plan.dimensions).toEqual({ dof: 6, reach_m: 0.9, payload_kg: 5, gripper: 'parallel, 2 fingers' });
    expect(plan.joints.filter((j) => j.type === 'revolute')).toHaveLength(6);
    expect(plan.assumptions).toEqual([]);
    const vague = (await engine.plan('a robot arm', [DOF_QUESTION], [{ id: 'dof', answer: 'not sure, whatever works' }])) as RobotPlan;
    expect(vague.assumptions).toEqual([
      'degrees of freedom not understood from "not sure, whatever works": assumed 6',
      'reach not understood: assumed 0.8 m',
      'payload not understood: assumed 1 kg',
    ]);
  });

  test('free-text answers are read: kind and DoF', async () => {
    const plan = (await engine.plan('something for my lab', [KIND_QUESTION, DOF_QUESTION], [
      { id: 'kind', answer: 'An arm please, with a gripper' },
      { id: 'dof', answer: 'seven' },
    ])) as RobotPlan;
    expect(plan.robot_type).toBe('arm');
    expect(plan.dimensions.dof).toBe(7);
    expect(plan.title).toBe('7-DoF arm with parallel gripper');
  });

  test('a base whose prompt names length or width without a figure falls back to the defaults', async () => {
    const plan = (await engine.plan('a differential-drive base; length and width up to you, payload whatever', [], [])) as RobotPlan;
    expect(plan.dimensions).toMatchObject({ length_m: 0.6, width_m: 0.45, payload_kg: 10 });
    const sized = (await engine.plan('a differential-drive base 80 cm long and 50 cm wide with 8 cm wheels', [], [])) as RobotPlan;
    expect(sized.dimensions).toMatchObject({ length_m: 0.8, width_m: 0.5, wheel_radius_m: 0.08 });
  });

  test.each([
    ['policy', BELT, []],
    ['arm', ARM, []],
    ['differential drive', 'a differential-drive base with 8 cm wheels', []],
    ['mobile manipulator', 'a mobile manipulator: a 5-dof arm on a wheeled base', []],
    ['unknown kind, unreadable answers', 'hmm', [{ id: 'kind', answer: '??' }, { id: 'dof', answer: '??' }]],
  ])('%s: the plan builds a valid artifact, byte-identical on a second run', async (_name, prompt, answers) => {
    const questions = (await engine.analyze(prompt)).questions;
    const plan = await engine.plan(prompt, questions, answers);
    const artifact = buildArtifact(plan);
    await validateArtifact(plan, artifact);
    const again = buildArtifact(await engine.plan(prompt, questions, answers));
    expect(sha256(again.main.bytes)).toBe(sha256(artifact.main.bytes));
  });
});
