import { createConnection } from 'mysql2/promise';
import { findSeedOwner, seedRuns } from './seed-runs';
async function main() {
  const c = await createConnection(process.argv[2]);
  const owner = await findSeedOwner(c);
  const t = Date.now();
  await seedRuns(c, owner, Number(process.argv[3]), { now: new Date(), salt: process.argv[4] ?? 'a' });
  console.log(process.argv[2], process.argv[3], Date.now() - t);
  await c.end();
}
void main();
