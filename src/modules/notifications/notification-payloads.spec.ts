import { envelope, slackBody } from './notification-payloads';

describe('slackBody', () => {
  const run = {
    id: 'r1',
    state: 'FAILED',
    title: 'Fix <the> build & tests',
    status_message: { message: 'exit code 1' },
    session_link: 'https://ambient.example/console/runs/r1',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:01:00.000Z',
  };

  it('says what happened to which run, with a link to its console page', () => {
    const body = JSON.parse(slackBody(envelope('run.failed', { run }))) as { text: string };
    expect(body).toEqual({
      text: 'Run “Fix &lt;the&gt; build &amp; tests” failed: exit code 1 <https://ambient.example/console/runs/r1|Open in Ambient>',
    });
  });

  it('names the event when the payload holds no run', () => {
    expect(JSON.parse(slackBody(envelope('approval.decided', {})))).toEqual({
      text: 'Ambient: approval.decided',
    });
  });
});
