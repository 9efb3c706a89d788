/** Unit, integration and e2e suites under test/, by context. Runs against DATABASE_URL when set, PGlite otherwise. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testTimeout: 60000,
  testSequencer: '<rootDir>/test/support/sequencer.js',
  // On a Postgres server a suite waits on the server's processes (and on the services some
  // suites start), so workers beyond the cores fill that time: on 2 cores, 4 workers finish
  // the Postgres pass in 198 s where 2 take 274 s (docs/performance.md). PGlite runs in the
  // worker itself: more workers than cores only queue for them.
  maxWorkers: process.env.DATABASE_URL ? 4 : 2,
  // A worker keeps every test file's module graph (and, on PGlite, its WASM heap) until the
  // garbage collector catches up, reaching 1.1-1.3 GB and collecting more and more often: a
  // fresh worker once it holds more than this took the PGlite pass from 526 s to 337 s on
  // 2 cores, the Postgres pass unchanged (docs/performance.md).
  workerIdleMemoryLimit: '800MB',
  // A worker told to end has had 500 ms to exit before jest kills it and reports "a worker
  // process has failed to exit gracefully". On 2 busy cores a worker with nothing left open
  // can take longer (and one recycled by the memory limit above has to start afresh first):
  // a bare suite of eight one-line tests under `stress --cpu 8` was reported so in 3 of 6 runs.
  // Given 10 s, a worker that truly hangs on a leaked handle is still killed and reported.
  workerGracefulExitTimeout: 10_000,
};
