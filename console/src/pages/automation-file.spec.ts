import { automationFile, splitAutomation } from './automation-file';

const fields = {
  name: 'triage',
  enabled: true,
  model: 'fake-model',
  webhookIds: ['wh_1'],
  payload: '{"event": ["deploy"]}',
  prompt: 'Handle the delivery.\n',
};

describe('automation.md written by the console', () => {
  it('holds one webhook trigger with its filter, the model and the prompt', () => {
    const { front, body } = splitAutomation(automationFile(fields));
    expect(front).toEqual({
      enabled: true,
      model: 'fake-model',
      triggers: [
        {
          provider: 'webhook',
          event: 'received',
          filter: { webhook_ids: ['wh_1'], payload: { event: ['deploy'] } },
        },
      ],
    });
    expect(body).toBe('Handle the delivery.\n');
  });

  it('keeps what the form does not edit from the existing file, and drops a cleared model', () => {
    const existing =
      '---\nharness: claude\nmodel: old\ntriggers:\n  - provider: webhook\n    event: received\n    filter: {webhook_ids: [wh_0]}\n  - provider: webhook\n    event: received\n    filter: {webhook_ids: [wh_9]}\n---\nOld prompt\n';
    const { front } = splitAutomation(
      automationFile({ ...fields, model: '', payload: '', enabled: false }, existing),
    );
    expect(front.harness).toBe('claude');
    expect(front.model).toBeUndefined();
    expect(front.enabled).toBe(false);
    expect(front.triggers).toEqual([
      { provider: 'webhook', event: 'received', filter: { webhook_ids: ['wh_1'] } },
      { provider: 'webhook', event: 'received', filter: { webhook_ids: ['wh_9'] } },
    ]);
  });

  it('refuses a payload filter that is not JSON, naming it', () => {
    expect(() => automationFile({ ...fields, payload: '{event: deploy' })).toThrow(
      'The payload filter is not valid JSON.',
    );
  });
});
