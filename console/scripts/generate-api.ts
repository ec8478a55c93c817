/**
 * `npm run console:api`: boots the api role on a scratch database (MariaDB and Redis as for the
 * tests), reads its OpenAPI document and rewrites console/src/api/schema.d.ts.
 */
import { writeFileSync } from 'node:fs';
import { createTestEnvironment, startTestApp } from '../../test/support/test-app';
import { SCHEMA_FILE, schemaSourceOf } from './openapi-types';

async function main(): Promise<void> {
  const env = createTestEnvironment('console_api', 'http://127.0.0.1:9/v1');
  const app = await startTestApp(env, ['api']);
  try {
    const res = await fetch(`${app.baseUrl}/openapi.json`);
    if (!res.ok) throw new Error(`GET /openapi.json answered ${res.status}`);
    writeFileSync(SCHEMA_FILE, await schemaSourceOf(await res.json()));
    console.log(`wrote ${SCHEMA_FILE}`);
  } finally {
    await app.close();
    await env.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
