import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import * as ort from 'onnxruntime-web';
import { buildArtifact, sha256, validateArtifact } from '../../src/factory/assets/artifact';
import { InvalidArtifactError } from '../../src/factory/assets/invalid-artifact';
import { buildPolicyModel } from '../../src/factory/assets/onnx-policy';
import { validatePolicyModel } from '../../src/factory/assets/onnx-validator';
import { validateRobotPackage } from '../../src/factory/assets/robot-package';
import { validateUrdf } from '../../src/factory/assets/urdf-validator';
import { DEFAULT_LIMITS } from '../../src/inspection/inspection';
import { RangedFile } from '../../src/inspection/ranged-file';
import { inspectFile } from '../../src/inspection/registry';
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
  const PKG = 'two_link_arm_description';
  const FILES = [`${PKG}/package.xml`, `${PKG}/CMakeLists.txt`, `${PKG}/urdf/two_link_arm.urdf`, `${PKG}/launch/display.launch.xml`, `${PKG}/README.md`, `${PKG}/manifest.json`];

  test('is a ROS 2 package: package.xml (format 3), CMakeLists.txt (ament_cmake), the URDF, a launch file, README and manifest', async () => {
    const plan = robotPlan();
    const artifact = buildArtifact(plan);
    expect(artifact.main.name).toBe('two-link-arm.zip');
    await validateArtifact(plan, artifact);
    expect(await validateRobotPackage(artifact.main.bytes)).toMatchObject({ ros_package: PKG, robot: 'two_link_arm', movable_joints: 2 });
    const files = unzipSync(artifact.main.bytes);
    expect(Object.keys(files)).toEqual(FILES);
    expect(validateUrdf(strFromU8(files[`${PKG}/urdf/two_link_arm.urdf`]))).toEqual({ robot: 'two_link_arm', root: 'base_link', links: 3, joints: 2, movable_joints: 2, total_mass_kg: 5 });
    expect(strFromU8(files[`${PKG}/README.md`])).toMatch(/payload not understood: assumed 1 kg/);
    expect(strFromU8(files[`${PKG}/README.md`])).toMatch(`ros2 launch ${PKG} display.launch.xml`);
  });

  test("package.xml parses and has format 3's required elements; CMakeLists.txt agrees with it; the launch file is well-formed and loads the URDF", () => {
    const files = unzipSync(buildArtifact(robotPlan()).main.bytes);
    const packageXml = strFromU8(files[`${PKG}/package.xml`]);
    expect(XMLValidator.validate(packageXml)).toBe(true);
    const pkg = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@' }).parse(packageXml).package;
    // REP 149 (package_format3.xsd): name, version, description, maintainer (with email), license are required, in that order.
    expect(pkg['@format']).toBe('3');
    expect(pkg.name).toBe(PKG);
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.description).toEqual(expect.any(String));
    expect(pkg.maintainer['@email']).toMatch(/@/);
    expect(pkg.license).toBe('MIT');
    expect(Object.keys(pkg).filter((k) => !k.startsWith('@')).slice(0, 5)).toEqual(['name', 'version', 'description', 'maintainer', 'license']);
    expect(pkg.buildtool_depend).toBe('ament_cmake');
    expect(pkg.exec_depend).toEqual(expect.arrayContaining(['robot_state_publisher', 'joint_state_publisher']));
    expect(pkg.export.build_type).toBe('ament_cmake');

    const cmake = strFromU8(files[`${PKG}/CMakeLists.txt`]);
    expect(cmake).toMatch(`project(${PKG})`);
    expect(cmake).toMatch('find_package(ament_cmake REQUIRED)');
    expect(cmake).toMatch('install(DIRECTORY launch urdf DESTINATION share/${PROJECT_NAME})');
    expect(cmake).toMatch(/^ament_package\(\)$/m);

    const launchXml = strFromU8(files[`${PKG}/launch/display.launch.xml`]);
    expect(XMLValidator.validate(launchXml)).toBe(true);
    const launch = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@' }).parse(launchXml).launch;
    const rsp = launch.node.find((n: any) => n['@pkg'] === 'robot_state_publisher');
    expect(rsp.param).toMatchObject({ '@name': 'robot_description', '@value': `$(command 'cat $(find-pkg-share ${PKG})/urdf/two_link_arm.urdf')` });
    // What CMakeLists installs to share/<pkg> is where the launch file looks: urdf/ is in the package.
    expect(files[`${PKG}/urdf/two_link_arm.urdf`]).toBeDefined();
  });

  test('passes the inspection every published file goes through: the zip, and its URDF', async () => {
    const files = unzipSync(buildArtifact(robotPlan()).main.bytes);
    const zip = await inspectFile(RangedFile.ofBytes('two-link-arm.zip', buildArtifact(robotPlan()).main.bytes, DEFAULT_LIMITS));
    expect(zip).toMatchObject({ ok: true, inspection: { format: 'zip', entries: 6 } });
    const urdf = await inspectFile(RangedFile.ofBytes('two_link_arm.urdf', files[`${PKG}/urdf/two_link_arm.urdf`], DEFAULT_LIMITS));
    expect(urdf).toMatchObject({ ok: true, inspection: { format: 'urdf', robot: 'two_link_arm', links: 3, meshes: [] } });
  });

  /** The generated package with one file changed (or removed, for null), zipped again. */
  const altered = (path: string, change: (text: string) => string | null) => {
    const files = unzipSync(buildArtifact(robotPlan()).main.bytes);
    const changed = change(strFromU8(files[path]));
    if (changed === null) delete files[path];
    else files[path] = strToU8(changed);
    return zipSync(files);
  };

  test.each([
    ['package.xml of format 2', `${PKG}/package.xml`, (x: string) => x.replace('format="3"', 'format="2"'), /package.xml: format is "2", not 3/],
    ['package.xml naming another package', `${PKG}/package.xml`, (x: string) => x.replace(`<name>${PKG}</name>`, '<name>other_description</name>'), /is not its folder's/],
    ['an invalid package name', `${PKG}/package.xml`, (x: string) => x.replace(`<name>${PKG}</name>`, '<name>Two-Link</name>'), /not a valid ROS package name/],
    ['a maintainer without email', `${PKG}/package.xml`, (x: string) => x.replace(' email="maintainer@example.com"', ''), /maintainer has no email/],
    ['no license', `${PKG}/package.xml`, (x: string) => x.replace('<license>MIT</license>', ''), /no license/],
    ['a catkin build type', `${PKG}/package.xml`, (x: string) => x.replace('<build_type>ament_cmake</build_type>', '<build_type>catkin</build_type>'), /build_type> is not ament_cmake/],
    ['package.xml declaring an entity', `${PKG}/package.xml`, (x: string) => x.replace('<package', '<!DOCTYPE p [<!ENTITY a "b">]><package'), /package.xml: it declares XML entities/],
    ['no package.xml', `${PKG}/package.xml`, () => null, /has 0 <folder>\/package.xml/],
    ['a CMake project of another name', `${PKG}/CMakeLists.txt`, (x: string) => x.replace(`project(${PKG})`, 'project(robot)'), /project\(robot\) is not package.xml's name/],
    ['CMakeLists.txt not installing the URDF', `${PKG}/CMakeLists.txt`, (x: string) => x.replace('launch urdf', 'launch'), /does not install urdf\//],
    ['a launch file that is not well-formed', `${PKG}/launch/display.launch.xml`, (x: string) => x.replace('</launch>', ''), /display.launch.xml: it is not well-formed XML/],
    ['a launch file loading another URDF', `${PKG}/launch/display.launch.xml`, (x: string) => x.replace('urdf/two_link_arm.urdf', 'urdf/robot.urdf'), /robot_description does not load/],
    ['a mesh of another package', `${PKG}/urdf/two_link_arm.urdf`, (x: string) => x.replace('<box size', '<mesh filename="package://other/meshes/a.stl"/><box size'), /mesh "package:\/\/other\/meshes\/a.stl" is not a package:\/\/two_link_arm_description\/... reference/],
    ['a mesh missing from the package', `${PKG}/urdf/two_link_arm.urdf`, (x: string) => x.replace('<box size', `<mesh filename="package://${PKG}/meshes/a.stl"/><box size`), /is not in the package/],
  ])('refuses a package with %s', async (_what, path, change, message) => {
    const failure = validateRobotPackage(altered(path, change));
    await expect(failure).rejects.toThrow(InvalidArtifactError);
    await expect(validateRobotPackage(altered(path, change))).rejects.toThrow(message);
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
