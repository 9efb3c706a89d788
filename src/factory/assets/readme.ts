import { layerWidths } from './onnx-policy';
import type { AssetPlan, PolicyPlan, RobotPlan } from './plan';
import { num } from './urdf';
import { robotName, rosPackageName } from './robot-package';

function assumptions(plan: AssetPlan): string[] {
  if (!plan.assumptions.length) return [];
  return ['', '## Assumptions', '', 'Defaults taken where the prompt and answers did not say:', '', ...plan.assumptions.map((a) => `- ${a}`)];
}

function policyReadme(plan: PolicyPlan, fileName: string): string {
  const space = (title: string, s: PolicyPlan['observation']) => [
    '',
    `## ${title}: \`${s.tensor}\`, float32 [batch, ${s.size}]`,
    '',
    '| slice | size | unit |',
    '|---|---|---|',
    ...s.fields.map((f) => `| ${f.name} | ${f.size} | ${f.unit} |`),
  ];
  return [
    `# ${plan.title}`,
    '',
    `Task: ${plan.task}`,
    '',
    `\`${fileName}\` is an ONNX policy network (opset 13). **It is an untrained draft to fine-tune**:`,
    'the weights are a deterministic Xavier-uniform initialisation, so its actions mean nothing',
    'until it is trained on your task.',
    ...space('Observation', plan.observation),
    ...space('Action', plan.action),
    '',
    '## Network',
    '',
    `MLP ${layerWidths(plan).join(' → ')}, ${plan.activation} between layers, linear output (Gemm per layer).`,
    ...assumptions(plan),
    '',
  ].join('\n');
}

function robotReadme(plan: RobotPlan): string {
  const robot = robotName(plan);
  const pkg = rosPackageName(robot);
  return [
    `# ${plan.title}`,
    '',
    `A ROS 2 robot description package (${plan.robot_type.replace('_', ' ')}), \`${pkg}\`: \`urdf/${robot}.urdf\`,`,
    '`package.xml` (format 3), `CMakeLists.txt` (ament_cmake), `launch/display.launch.xml`, this README and',
    '`manifest.json`. Geometry is primitive shapes and inertials are those of uniform solids:',
    'a draft to refine against the real hardware before relying on dynamics.',
    '',
    '## Use',
    '',
    '```sh',
    'unzip <file>.zip -d ~/ros2_ws/src && cd ~/ros2_ws && colcon build',
    `source install/setup.bash && ros2 launch ${pkg} display.launch.xml`,
    '```',
    '',
    'The launch file runs robot_state_publisher with the URDF as `robot_description` and',
    'joint_state_publisher. Set the maintainer in `package.xml` before releasing the package.',
    '',
    '## Dimensions',
    '',
    ...Object.entries(plan.dimensions).map(([k, v]) => `- ${k}: ${v}`),
    '',
    '## Joints',
    '',
    '| joint | type | parent → child | limits |',
    '|---|---|---|---|',
    ...plan.joints.map((j) => `| ${j.name} | ${j.type} | ${j.parent} → ${j.child} | ${j.limit ? `${num(j.limit.lower)} … ${num(j.limit.upper)}` : '-'} |`),
    '',
    `${plan.links.length} links, total mass ${num(plan.links.reduce((m, l) => m + l.mass_kg, 0))} kg.`,
    ...assumptions(plan),
    '',
  ].join('\n');
}

/** The README.md shipped with an artifact: what it is, its interface, and the defaults assumed. */
export function buildReadme(plan: AssetPlan, fileName: string): string {
  return plan.kind === 'policy_network' ? policyReadme(plan, fileName) : robotReadme(plan);
}
