import parseSpdx from 'spdx-expression-parse';
import correctSpdx from 'spdx-correct';
import { Errors } from '../platform/errors';

/**
 * A listing's license (issue 40, decisions section 5): an SPDX license expression
 * ("MIT", "Apache-2.0 OR MIT", "Apache-2.0 WITH LLVM-exception"), a "LicenseRef-…" of the
 * seller's own, or "proprietary". spdx-expression-parse holds the SPDX list; spdx-correct
 * suggests the identifier a near miss meant ("Apache 2.0" -> "Apache-2.0"). Checked on
 * publish and PATCH only: stored events are not edited, so listings keep what they have.
 */
export const PROPRIETARY = 'proprietary';

export function isValidLicense(license: string): boolean {
  if (license === PROPRIETARY) return true;
  try {
    parseSpdx(license);
    return true;
  } catch {
    return false;
  }
}

export function assertValidLicense(license: string | undefined | null): void {
  // Not stated (a dataset may leave it out): nothing to check.
  if (!license || isValidLicense(license)) return;
  const suggestion = correctSpdx(license, { upgrade: false });
  const hint = suggestion && suggestion !== license && isValidLicense(suggestion) ? ` Did you mean "${suggestion}"?` : '';
  throw Errors.validationFailed(
    `Invalid field "license": "${license}" is not an SPDX license expression (such as "MIT" or "Apache-2.0 OR MIT"), a "LicenseRef-…" or "${PROPRIETARY}".${hint}`,
  );
}
