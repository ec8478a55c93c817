import { createConnection } from 'mysql2/promise';
import { createTestEnvironment, startTestApp } from '../test/support/test-app';
import { analyzeRuns, findSeedOwner, seedRuns } from './seed-runs';

async function main() {
  let t = Date.now();
  const env = createTestEnvironment('scratch', 'http://127.0.0.1:9/v1');
  const app = await startTestApp(env, ['api']);
  console.log('env+app', Date.now() - t, env.databaseUrl);
  const c = await createConnection(env.databaseUrl);
  const owner = await findSeedOwner(c);
  t = Date.now();
  await seedRuns(c, owner, 10_000, { now: new Date(), salt: 'a' });
  console.log('10k', Date.now() - t);
  t = Date.now();
  await seedRuns(c, owner, Number(process.argv[2] ?? 990_000), { now: new Date(), salt: 'b' });
  console.log('big', Date.now() - t);
  t = Date.now();
  await analyzeRuns(c);
  console.log('analyze', Date.now() - t);
  await c.end();
  await app.close();
  console.log('kept', env.databaseUrl);
}
void main();
