/** The package's version, sent in the user-agent (kept equal to package.json's by run-tests.sh). */
export const VERSION = '0.1.0';
