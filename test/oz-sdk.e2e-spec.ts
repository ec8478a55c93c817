import OzAPI, { BadRequestError, NotFoundError } from 'oz-agent-sdk';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/** Compatibility checked by a client nobody here wrote: the official oz-agent-sdk from npm. */
describe('official oz-agent-sdk against Ambient', () => {
  let client: OzAPI;

  const { model, app } = useTestApp('oz_sdk', ['api', 'worker']);

  beforeAll(async () => {
    client = new OzAPI({ apiKey: app.apiKey, baseURL: app.baseUrl, maxRetries: 0 });
  });

  it('creates a run, follows it to SUCCEEDED and retrieves it', async () => {
    const created = await client.agent.run({
      prompt: 'Say hello',
      title: 'SDK run',
      config: { name: 'sdk-check', model_id: 'fake-model' },
    });
    expect(created.state).toBe('QUEUED');
    expect(created.task_id).toBe(created.run_id);

    const run = await waitFor(
      () => client.agent.runs.retrieve(created.run_id),
      (r) => r.state === 'SUCCEEDED',
      { what: 'the SDK-created run to succeed' },
    );
    expect(run).toMatchObject({
      run_id: created.run_id,
      title: 'SDK run',
      prompt: 'Say hello',
      agent_config: { name: 'sdk-check', model_id: 'fake-model' },
      status_message: { message: 'Done.' },
    });
    expect(run.creator?.uid).toEqual(expect.any(String));
  });

  it('lists with filters and walks every page with the cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await client.agent.run({ prompt: `paged ${i}`, config: { name: 'paging' } });
      ids.push(created.run_id);
    }
    await waitFor(
      () => client.agent.runs.list({ name: 'paging', state: ['SUCCEEDED'], limit: 10 }),
      (page) => page.runs.length === 5,
      { what: 'the paging runs to succeed' },
    );

    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await client.agent.runs.list({ name: 'paging', limit: 2, cursor });
      seen.push(...page.runs.map((r) => r.run_id));
      if (!page.page_info.has_next_page) break;
      cursor = page.page_info.next_cursor;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen)).toEqual(new Set(ids));

    const none = await client.agent.runs.list({ name: 'paging', state: ['FAILED'] });
    expect(none.runs).toEqual([]);
    expect(none.page_info.has_next_page).toBe(false);
  });

  it('cancels a running run and reports SDK errors for refused requests', async () => {
    model.script('sdk-slow', [{ hang: true }]);
    const created = await client.agent.run({ prompt: 'Wait [script:sdk-slow]' });
    await waitFor(
      () => client.agent.runs.retrieve(created.run_id),
      (r) => r.state === 'INPROGRESS',
      { what: 'the run to start' },
    );
    const cancelled = await client.agent.runs.cancel(created.run_id);
    expect(cancelled).toBe(created.run_id);
    const run = await waitFor(
      () => client.agent.runs.retrieve(created.run_id),
      (r) => r.state === 'CANCELLED',
      { what: 'the run to be cancelled' },
    );
    expect(run.state).toBe('CANCELLED');

    await expect(client.agent.runs.cancel(created.run_id)).rejects.toBeInstanceOf(BadRequestError);
    await expect(client.agent.runs.retrieve('no-such-run')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.agent.runs.list({ limit: 501 })).rejects.toBeInstanceOf(BadRequestError);
  });
});
