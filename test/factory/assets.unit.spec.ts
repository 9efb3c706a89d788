import { strFromU8, unzipSync } from 'fflate';
import * as ort from 'onnxruntime-web';
import { buildArtifact, sha256, validateArtifact } from '../../src/factory/assets/artifact';
import { InvalidArtifactError } from '../../src/factory/assets/invalid-artifact';
import { buildPolicyModel } from '../../src/factory/assets/onnx-policy';
import { validatePolicyModel } from '../../src/factory/assets/onnx-validator';
import { validateUrdf } from '../../src/factory/assets/urdf-validator';
import { buildUrdf } from '../../src/factory/assets/urdf';
import { policyPlan, robotPlan } from './fixtures';

describe('policy network (ONNX)', () => {
  test('loads in onnxruntime-web and maps [batch, obs] to [batch, act]', async () => {
    const plan = policyPlan();
    const { main } = buildArtifact(plan);
    expect(main.name).toBe('belt-pick-policy.onnx');
    await validatePolicyModel(main.bytes, plan);
    const session = await ort.InferenceSession.create(main.bytes);
    const out = await session.run({ observation: new ort.Tensor('float32', new Float32Array(3 * 13).fill(0.1), [3, 13]) });
    expect(out.action.dims).toEqual([3, 7]);
    expect(session.inputNames).toEqual(['observation']);
    await session.release();
  });

  test('the same plan gives byte-identical models; another seed does not', () => {
    const a = buildArtifact(policyPlan()).main.bytes;
    expect(sha256(buildArtifact(policyPlan()).main.bytes)).toBe(sha256(a));
    expect(sha256(buildArtifact({ ...policyPlan(), seed: 7 }).main.bytes)).not.toBe(sha256(a));
  });

  test('relu networks build and run too', async () => {
    const plan = { ...policyPlan(), activation: 'relu' as const, hidden_layers: [32] };
    await validateArtifact(plan, buildArtifact(plan));
  });

  test('a model whose shapes differ from the plan fails validation', async () => {
    const bytes = buildPolicyModel(policyPlan());
    const other = { ...policyPlan(), action: { ...policyPlan().action, size: 8 } };
    await expect(validatePolicyModel(bytes, other)).rejects.toThrow(/shape/);
    await expect(validatePolicyModel(new Uint8Array([1, 2, 3]), policyPlan())).rejects.toBeInstanceOf(InvalidArtifactError);
  });

  test('ships a README that says it is an untrained draft, and a manifest', () => {
    const { companions } = buildArtifact(policyPlan());
    expect(companions.map((c) => c.name)).toEqual(['README.md', 'manifest.json']);
    expect(Buffer.from(companions[0].bytes).toString()).toMatch(/untrained draft to fine-tune/);
    expect(JSON.parse(Buffer.from(companions[1].bytes).toString()).plan.observation.size).toBe(13);
  });
});

describe('robot description package (URDF zip)', () => {
  test('holds robot.urdf, README.md and manifest.json; the URDF passes the checks', async () => {
    const plan = robotPlan();
    const artifact = buildArtifact(plan);
    expect(artifact.main.name).toBe('two-link-arm.zip');
    await validateArtifact(plan, artifact);
    const files = unzipSync(artifact.main.bytes);
    expect(Object.keys(files)).toEqual(['robot.urdf', 'README.md', 'manifest.json']);
    expect(validateUrdf(strFromU8(files['robot.urdf']))).toEqual({ robot: 'two_link_arm', root: 'base_link', links: 3, joints: 2, movable_joints: 2, total_mass_kg: 5 });
    expect(strFromU8(files['README.md'])).toMatch(/payload not understood: assumed 1 kg/);
  });

  test('the same plan gives a byte-identical zip', () => {
    expect(sha256(buildArtifact(robotPlan()).main.bytes)).toBe(sha256(buildArtifact(robotPlan()).main.bytes));
  });

  const broken = (change: (xml: string) => string) => () => validateUrdf(change(buildUrdf(robotPlan(), 'r')));

  test.each([
    ['a zero mass', (x: string) => x.replace('<mass value="1.2"/>', '<mass value="0"/>'), /mass/],
    ['an inertia that is not positive definite', (x: string) => x.replace(/ixx="[^"]+"/, 'ixx="-1"'), /positive definite/],
    ['an impossible inertia', (x: string) => x.replace(/izz="[^"]+"/, 'izz="50"'), /triangle/],
    ['a revolute joint without limits', (x: string) => x.replace(/<limit lower="-1.5"[^>]*\/>/, ''), /has no limit/],
    ['inverted limits', (x: string) => x.replace('lower="-1.5" upper="1.5"', 'lower="1.5" upper="-1.5"'), /not below/],
    ['a joint to a missing link', (x: string) => x.replace('<child link="link_2"/>', '<child link="link_9"/>'), /does not exist/],
    ['two roots', (x: string) => x.replace(/<joint name="joint_2"[\s\S]*?<\/joint>/, ''), /2 trees/],
    ['a cycle', (x: string) => x.replace('<parent link="base_link"/>', '<parent link="link_2"/>'), /trees|not connected/],
    ['a link without collision', (x: string) => x.replace(/<collision>.*?<\/collision>/, ''), /no collision/],
    ['a zero axis', (x: string) => x.replace('<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>'), /zero axis/],
    ['broken XML', (x: string) => x.replace('</robot>', ''), /well-formed/],
  ])('rejects %s', (_what, change, message) => {
    expect(broken(change)).toThrow(message);
  });
});
