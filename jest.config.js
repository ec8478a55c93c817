/** Unit specs live beside the code; e2e specs in test/ boot real apps on real MySQL and Redis. */
const transform = { '^.+\\.ts$': ['@swc/jest'] };

module.exports = {
  maxWorkers: 2,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/src/**/*.spec.ts'],
      transform,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      transform,
      testTimeout: 60_000,
      slowTestThreshold: 30,
    },
  ],
};
