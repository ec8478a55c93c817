/** Unit specs live beside the code; e2e specs in test/ boot real apps on real MySQL and Redis. */
const transform = { '^.+\\.(t|j)s$': ['@swc/jest'] };
// Nest 12 and openid-client 6 (with its oauth4webapi and jose) ship ESM: let swc turn them into
// CommonJS for jest (Node itself loads them with require(esm)).
const transformIgnorePatterns = ['node_modules/(?!(@nestjs|openid-client|oauth4webapi|jose)/)'];

module.exports = {
  maxWorkers: 2,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/console/src/**/*.spec.ts'],
      transform,
      transformIgnorePatterns,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      transform,
      transformIgnorePatterns,
      setupFilesAfterEnv: ['<rootDir>/test/support/e2e-setup.ts'],
      slowTestThreshold: 30,
    },
  ],
};
