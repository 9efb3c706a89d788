import { buildArtifact, validateArtifact } from '../../src/factory/assets/artifact';
import { EngineFailedError } from '../../src/factory/engines/engine';
import { parsePlan, parseQuestions } from '../../src/factory/engines/plan-schema';

/** What live mode accepts from a model server before anything is built from it. */
describe('plan schema (live engine answers)', () => {
  const policy = {
    kind: 'policy_network',
    title: 'Reach policy',
    task: 'reach a target',
    observation: { fields: [{ name: 'joint_positions', size: 6, unit: 'rad' }, { name: 'target', size: 3, unit: 'm' }] },
    action: { fields: [{ name: 'joint_velocities', size: 6, unit: 'rad/s' }] },
    hidden_layers: [64, 64],
    activation: 'relu',
    assumptions: ['payload not understood: assumed 1 kg'],
  };

  test('a valid policy plan gets tensor names, sizes and our seed, and builds a valid model', async () => {
    const plan = parsePlan(policy, 7);
    expect(plan).toMatchObject({ kind: 'policy_network', seed: 7, observation: { tensor: 'observation', size: 9 }, action: { tensor: 'action', size: 6 } });
    await validateArtifact(plan, buildArtifact(plan));
  });

  test.each([
    ['a missing kind', { ...policy, kind: undefined }, /plan.kind/],
    ['a huge layer', { ...policy, hidden_layers: [1_000_000] }, /hidden_layers\[0\]/],
    ['a field name that is not an identifier', { ...policy, action: { fields: [{ name: 'x y', size: 1, unit: 'm' }] } }, /action.fields\[0\].name/],
    ['a zero-size field', { ...policy, action: { fields: [{ name: 'x', size: 0, unit: 'm' }] } }, /size/],
    ['an unknown activation', { ...policy, activation: 'gelu' }, /activation/],
    ['a robot link with a negative mass', { kind: 'robot_description', title: 'r', robot_type: 'arm', links: [{ name: 'a', geometry: { shape: 'sphere', radius: 0.1 }, mass_kg: -1 }] }, /mass_kg/],
    ['a revolute joint without limits', { kind: 'robot_description', title: 'r', robot_type: 'arm', links: [{ name: 'a', geometry: { shape: 'sphere', radius: 0.1 }, mass_kg: 1 }], joints: [{ name: 'j', type: 'revolute', parent: 'a', child: 'b', origin_xyz: [0, 0, 0], axis: [0, 0, 1] }] }, /limit/],
    ['not an object', 'a robot', /plan must be an object/],
  ])('rejects %s as engine_failed', (_what, value, message) => {
    expect(() => parsePlan(value, 1)).toThrow(EngineFailedError);
    expect(() => parsePlan(value, 1)).toThrow(message);
  });

  test('analysis answers: a kind or null, and questions with identifier ids', () => {
    expect(parseQuestions({ kind: null, questions: [{ id: 'dof', question: 'How many joints?' }] })).toEqual({ kind: undefined, questions: [{ id: 'dof', question: 'How many joints?' }] });
    expect(parseQuestions({ kind: 'policy_network', questions: [] })).toEqual({ kind: 'policy_network', questions: [] });
    expect(() => parseQuestions({ kind: 'robot', questions: [] })).toThrow(EngineFailedError);
  });
});
