import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { check } from './invalid-artifact';
import type { RobotPlan } from './plan';
import { UrdfSummary, validateUrdf } from './urdf-validator';

export const PACKAGE_FILES = ['robot.urdf', 'README.md', 'manifest.json'] as const;

/**
 * Every entry gets the same timestamp, built from local-time parts: zip stores DOS local
 * time, so a Date from local parts encodes identically in any time zone (same plan, same bytes).
 */
const FIXED_MTIME = new Date(1980, 0, 1, 0, 0, 0);

/** The .zip of a robot description: robot.urdf, README.md, manifest.json, in that order. */
export function zipRobotPackage(files: Record<(typeof PACKAGE_FILES)[number], string>): Uint8Array {
  const entries: Record<string, [Uint8Array, { mtime: Date }]> = {};
  for (const name of PACKAGE_FILES) entries[name] = [strToU8(files[name]), { mtime: FIXED_MTIME }];
  return zipSync(entries, { level: 9, mtime: FIXED_MTIME });
}

/** Unzips a package and checks it holds the three files, a parseable manifest and a URDF that passes validateUrdf. */
export function validateRobotPackage(bytes: Uint8Array): UrdfSummary {
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes);
  } catch (error) {
    check(false, `the package is not a readable zip: ${(error as Error).message}`);
  }
  for (const name of PACKAGE_FILES) check(entries[name], `the package has no ${name}`);
  try {
    JSON.parse(strFromU8(entries['manifest.json']));
  } catch {
    check(false, 'manifest.json is not JSON');
  }
  return validateUrdf(strFromU8(entries['robot.urdf']));
}

export function robotName(plan: RobotPlan): string {
  return plan.title.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '') || 'robot';
}
