/** Unit specs live beside the code; e2e specs in test/ boot real apps on real MySQL and Redis. */
const transform = { '^.+\\.(t|j)s$': ['@swc/jest'] };
// Nest 12 ships ESM: let swc turn it into CommonJS for jest.
const transformIgnorePatterns = ['node_modules/(?!@nestjs/)'];

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
