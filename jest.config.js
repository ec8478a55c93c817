/** Unit specs live beside the code; e2e specs in test/ boot real apps on real MySQL and Redis. */
const transform = { '^.+\\.(t|j)s$': ['@swc/jest'] };
// Nest 12 and openid-client 6 (with its oauth4webapi and jose) ship ESM: let swc turn them into
// CommonJS for jest (Node itself loads them with require(esm)).
const transformIgnorePatterns = ['node_modules/(?!(@nestjs|openid-client|oauth4webapi|jose)/)'];
// The extension types package resolves from the repository as tsconfig `paths` says (no install).
const moduleNameMapper = {
  '^@ambient/extension-api$': '<rootDir>/packages/extension-api/index.ts',
};

module.exports = {
  maxWorkers: 2,
  // Every e2e file loads the whole app (≈ 3,200 modules) into the worker, and not all of it is
  // freed: after 40 minutes of a CI run each worker held 4 GB, its major GCs stalled the event
  // loop for seconds, app start-ups took 25–55 s and leases lapsed. A worker above this after a
  // file is replaced by a fresh one.
  workerIdleMemoryLimit: '1GB',
  // A worker near that limit takes 0.7-1.0 s here to exit after its 'exit' event (freeing ~1 GB
  // of heap on a VM): jest's 500 ms default killed it and printed "failed to exit gracefully"
  // though nothing was left open. A worker that truly leaks a handle is still reported.
  workerGracefulExitTimeout: 5000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/console/src/**/*.spec.ts'],
      transform,
      transformIgnorePatterns,
      moduleNameMapper,
      // 20 s per test (see the file).
      setupFilesAfterEnv: ['<rootDir>/test/support/unit-setup.ts'],
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      transform,
      transformIgnorePatterns,
      moduleNameMapper,
      setupFilesAfterEnv: ['<rootDir>/test/support/e2e-setup.ts'],
      slowTestThreshold: 30,
    },
  ],
};
