import type { AssetPlan } from './assets/plan';
import type { JobDraft } from './events';

/**
 * Listing metadata for a built plan, filled at generation so review shows what publish
 * will list. MIT: the artifact is generated from the creator's own prompt, and a draft
 * to fine-tune is most useful when anyone may build on it; the creator can change it on
 * the listing after publishing.
 */
export function draftFor(plan: AssetPlan): JobDraft {
  if (plan.kind === 'policy_network') {
    return {
      title: plan.title,
      type: 'policy',
      license: 'MIT',
      description: `ONNX policy network draft (untrained, to fine-tune) for: ${plan.task}. Observation [batch, ${plan.observation.size}], action [batch, ${plan.action.size}], MLP ${plan.hidden_layers.join('x')} ${plan.activation}.`,
      category: 'manipulation',
      tags: ['onnx', 'policy', 'draft', ...plan.observation.fields.map((f) => f.name.replace(/_/g, '-'))].slice(0, 10),
    };
  }
  const movable = plan.joints.filter((j) => j.type !== 'fixed').length;
  return {
    title: plan.title,
    type: 'robot-description',
    license: 'MIT',
    description: `ROS 2 robot description package (package.xml, CMakeLists.txt, a URDF, a launch file for robot_state_publisher): ${plan.links.length} links, ${movable} movable joints. ${Object.entries(plan.dimensions).map(([k, v]) => `${k} ${v}`).join(', ')}.`,
    category: plan.robot_type === 'differential_drive' ? 'mobile-robots' : 'manipulation',
    tags: ['urdf', 'robot-description', plan.robot_type.replace(/_/g, '-')],
  };
}
