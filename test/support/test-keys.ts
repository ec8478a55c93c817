/** AMBIENT_SECRETS_KEY of every test process (32 bytes, hex). */
export const TEST_SECRETS_KEY = '7e'.repeat(32);
