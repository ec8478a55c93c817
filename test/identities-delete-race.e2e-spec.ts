import { performance } from 'node:perf_hooks';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

interface Attempt {
  startedAt: number;
  endedAt: number;
  status: number;
}

/**
 * Deleting an agent identity deletes its keys in the same transaction. While requests with its
 * keys hammer the API, none started after the delete answered may succeed, and none started
 * after anyone saw the identity gone may succeed either.
 */
describe('agent identity delete racing with requests that use its keys', () => {
  // No run executes here, so the model catalogue can point nowhere.
  const { app, api } = useTestApp('identity_race', ['api'], {}, { model: false });

  it.each([1, 2, 3])('round %i: no request started after the delete succeeds', async () => {
    const agent = (await api.post('/agent/identities', { name: 'Doomed' })).body;
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) {
      keys.push((await api.post(`/agent/identities/${agent.uid}/api-keys`, {})).body.key);
    }
    let stop = false;
    const attempts: Attempt[] = [];
    const sightings: Attempt[] = [];
    const record = async (list: Attempt[], send: () => Promise<{ status: number }>) => {
      while (!stop) {
        const startedAt = performance.now();
        const { status } = await send();
        list.push({ startedAt, endedAt: performance.now(), status });
      }
    };
    const loops = [
      ...keys.map((key) => {
        const client = apiClient(app.baseUrl, key);
        return record(attempts, () => client.get('/agent/runs?limit=1'));
      }),
      record(attempts, () =>
        apiClient(app.baseUrl, keys[0]).post('/agent/runs', { prompt: 'race' }),
      ),
      // A person watching the identity: once it is gone for them, its keys must be dead too.
      record(sightings, () => api.get(`/agent/identities/${agent.uid}`)),
    ];
    try {
      await waitFor(
        async () => attempts.filter((a) => a.status === 200).length,
        (ok) => ok >= 10,
        { what: 'the keys to work before the delete' },
      );
      const deleted = await api.delete(`/agent/identities/${agent.uid}`);
      const deleteAnswered = performance.now();
      expect(deleted.status).toBe(204);
      await waitFor(
        async () => attempts.filter((a) => a.startedAt > deleteAnswered).length,
        (n) => n >= 20,
        { what: 'requests started after the delete' },
      );
      stop = true;
      await Promise.all(loops);

      const after = attempts.filter((a) => a.startedAt > deleteAnswered);
      expect(after.filter((a) => a.status !== 401)).toEqual([]);
      const goneSeen = sightings.find((s) => s.status === 404);
      expect(goneSeen).toBeDefined();
      const afterSeen = attempts.filter((a) => a.startedAt > goneSeen!.endedAt);
      expect(afterSeen.filter((a) => a.status !== 401)).toEqual([]);
      expect(sightings.filter((s) => s.startedAt > deleteAnswered && s.status !== 404)).toEqual([]);

      const [{ n }] = await app.dataSource.query(
        `SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?`,
        [agent.uid],
      );
      expect(Number(n)).toBe(0);
    } finally {
      stop = true;
      await Promise.all(loops);
    }
  });
});
