import { assertValidLicense, isValidLicense } from '../../src/catalog/license';
import { ApiError } from '../../src/platform/errors';

describe('licenses are SPDX (issue 40)', () => {
  test.each(['MIT', 'Apache-2.0', 'Apache-2.0 OR MIT', '(MIT AND BSD-3-Clause)', 'Apache-2.0 WITH LLVM-exception', 'GPL-3.0-or-later', 'LicenseRef-Acme-Robotics', 'proprietary'])('%p is accepted', (license) => {
    expect(isValidLicense(license)).toBe(true);
    expect(() => assertValidLicense(license)).not.toThrow();
  });

  test.each([
    ['totally-made-up', null],
    ['Apache 2.0', 'Apache-2.0'],
    ['mit', 'MIT'],
    ['MIT OR', 'MIT'],
    ['Proprietary', null],
  ])('%p is refused with 400 validation_failed naming license (suggesting %p)', (license, suggestion) => {
    let error: ApiError | undefined;
    try {
      assertValidLicense(license);
    } catch (e) {
      error = e as ApiError;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect([error!.status, error!.code]).toEqual([400, 'validation_failed']);
    expect(error!.message).toMatch(new RegExp(`^Invalid field "license": "${license.replace(/[.()]/g, '\\$&')}" is not an SPDX license expression`));
    if (suggestion) expect(error!.message).toContain(`Did you mean "${suggestion}"?`);
    else expect(error!.message).not.toContain('Did you mean');
  });

  test('a license not stated (a dataset may leave it out) is not checked', () => {
    expect(() => assertValidLicense(undefined)).not.toThrow();
    expect(() => assertValidLicense('')).not.toThrow();
  });
});
