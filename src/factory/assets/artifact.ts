import { createHash } from 'node:crypto';
import { slugify } from '../../platform/slug';
import { buildPolicyModel } from './onnx-policy';
import { validatePolicyModel } from './onnx-validator';
import type { AssetPlan } from './plan';
import { buildReadme } from './readme';
import { robotName, validateRobotPackage, zipRobotPackage } from './robot-package';
import { buildUrdf } from './urdf';

export interface BuiltFile {
  name: string;
  bytes: Uint8Array;
}

/**
 * What a build produces: the file a buyer downloads (`main`: the .onnx, or the .zip of a
 * ROS 2 description package that already holds README and manifest) and, for a bare model, the README.md and
 * manifest.json that go beside it.
 */
export interface BuiltArtifact {
  main: BuiltFile;
  companions: BuiltFile[];
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** No timestamps or ids: the manifest, like every byte here, follows from the plan alone. */
function manifest(plan: AssetPlan, fileName: string): string {
  return `${JSON.stringify({ format: 'svc-factory-asset/1', kind: plan.kind, title: plan.title, file: fileName, plan }, null, 2)}\n`;
}

/** Writes the artifact of a plan. Pure and deterministic: the same plan gives the same bytes. */
export function buildArtifact(plan: AssetPlan): BuiltArtifact {
  const base = slugify(plan.title) || 'asset';
  if (plan.kind === 'policy_network') {
    const name = `${base}.onnx`;
    const readme = buildReadme(plan, name);
    return {
      main: { name, bytes: buildPolicyModel(plan, readme) },
      companions: [
        { name: 'README.md', bytes: Buffer.from(readme) },
        { name: 'manifest.json', bytes: Buffer.from(manifest(plan, name)) },
      ],
    };
  }
  const name = `${base}.zip`;
  const robot = robotName(plan);
  const bytes = zipRobotPackage(robot, `URDF description of ${plan.title} (generated draft).`, {
    urdf: buildUrdf(plan, robot),
    readme: buildReadme(plan, name),
    manifest: manifest(plan, name),
  });
  return { main: { name, bytes }, companions: [] };
}

/** Checks the built file really works (see validatePolicyModel, validateRobotPackage); throws InvalidArtifactError. */
export async function validateArtifact(plan: AssetPlan, artifact: BuiltArtifact): Promise<void> {
  if (plan.kind === 'policy_network') await validatePolicyModel(artifact.main.bytes, plan);
  else await validateRobotPackage(artifact.main.bytes);
}
