import { useTestApp } from './support/use-test-app';

const RULES = [
  { command: '^git push', effect: 'ask' },
  { mcp_tool: 'deploy', effect: 'deny' },
  { write_outside: ['/workspace/app/'], effect: 'ask' },
  { egress: 'unlisted', effect: 'ask' },
];
/** RULES as stored and returned: paths normalised. */
const STORED = [RULES[0], RULES[1], { write_outside: ['/workspace/app'], effect: 'ask' }, RULES[3]];

/** Bad rules and the 400 each gets (the field below `approvals` named). */
const BAD_RULES: [unknown, string][] = [
  [[{ command: '(unclosed', effect: 'ask' }], '.0.command: is not a valid regular expression ('],
  [[RULES[0], { command: '^rm', effect: 'maybe' }], '.1.effect: must be one of ask, deny'],
  [[{ command: 'x', mcp_tool: 'y', effect: 'ask' }], '.0: must have exactly one of'],
  [
    [{ write_outside: ['relative/path'], effect: 'ask' }],
    '.0.write_outside.0: must be an absolute',
  ],
  [[{ egress: 'everything', effect: 'deny' }], '.0.egress: must be "unlisted"'],
  [[{ shell: 'x', effect: 'ask' }], '.0.shell: is not a rule field'],
  ['ask', ': must be an array of rules'],
];

/**
 * `approvals` (and agent identities' `approvers`) on every resource that carries them: accepted
 * and normalised, returned on reads, and refused with a 400 naming the field that changes nothing.
 */
describe('approvals: rules on environments, agent identities, runs and schedules', () => {
  const { api, app } = useTestApp('approvals_config', ['api'], {}, { model: false });

  const count = async (table: string): Promise<number> =>
    Number(
      ((await app.dataSource.query(`SELECT COUNT(*) AS n FROM ${table}`)) as { n: string }[])[0].n,
    );

  it('environments: stored normalised, returned, refused naming the rule, cleared by null or []', async () => {
    const created = await api.post('/agent/environments', { name: 'guarded', approvals: RULES });
    expect(created.status).toBe(201);
    const uid = created.body.uid as string;
    expect(created.body.config.approvals).toEqual(STORED);
    expect((await api.get(`/agent/environments/${uid}`)).body.config.approvals).toEqual(STORED);
    for (const [approvals, detail] of BAD_RULES) {
      const res = await api.patch(`/agent/environments/${uid}`, { approvals, description: 'x' });
      expect({ status: res.status, detail: res.body.detail }).toEqual({
        status: 400,
        detail: expect.stringContaining(`approvals${detail}`),
      });
    }
    const kept = (await api.get(`/agent/environments/${uid}`)).body;
    expect(kept.config).toMatchObject({ approvals: STORED, description: null });
    const before = await count('environments');
    expect((await api.post('/agent/environments', { name: 'x', approvals: 'ask' })).status).toBe(
      400,
    );
    expect(await count('environments')).toBe(before);
    for (const cleared of [null, []]) {
      await api.patch(`/agent/environments/${uid}`, { approvals: RULES });
      const res = await api.patch(`/agent/environments/${uid}`, { approvals: cleared });
      expect(res.status).toBe(200);
      expect(res.body.config.approvals).toBeUndefined();
    }
  });

  it('agent identities: approvals and approvers (user ids or e-mails) stored, returned, refused by field', async () => {
    const [{ id: adminId }] = (await app.dataSource.query(
      `SELECT id FROM users WHERE type = 'user' AND role = 'admin' LIMIT 1`,
    )) as { id: string }[];
    const created = await api.post('/agent/identities', {
      name: 'guarded-agent',
      approvals: RULES,
      approvers: ['Lead@Example.com', adminId, 'lead@example.com'],
    });
    expect(created.status).toBe(201);
    const uid = created.body.uid as string;
    expect(created.body).toMatchObject({
      approvals: STORED,
      approvers: ['lead@example.com', adminId],
    });
    const read = async () => (await api.get(`/agent/identities/${uid}`)).body;
    expect(await read()).toMatchObject({
      approvals: STORED,
      approvers: ['lead@example.com', adminId],
    });
    const before = await read();
    const refusals: [Record<string, unknown>, string][] = [
      ...BAD_RULES.map(([approvals, detail]): [Record<string, unknown>, string] => [
        { approvals },
        `approvals${detail}`,
      ]),
      [
        { approvers: ['not an address'] },
        'approvers.0: must be a user id (22 characters) or an e-mail',
      ],
      [{ approvers: [uid] }, `approvers.0: "${uid}" is not a person of this team`],
      [
        { approvers: ['AAAAAAAAAAAAAAAAAAAAAA'] },
        'approvers.0: "AAAAAAAAAAAAAAAAAAAAAA" is not a person',
      ],
      [{ approvers: 'lead@example.com' }, 'approvers: must be a list of user ids or e-mails'],
    ];
    for (const [body, detail] of refusals) {
      const res = await api.put(`/agent/identities/${uid}`, { ...body, description: 'changed' });
      expect({ status: res.status, detail: res.body.detail }).toEqual({
        status: 400,
        detail: expect.stringContaining(detail),
      });
    }
    expect(await read()).toEqual(before);
    const cleared = await api.put(`/agent/identities/${uid}`, { approvals: [], approvers: [] });
    expect(cleared.status).toBe(200);
    expect(cleared.body.approvals).toBeUndefined();
    expect(cleared.body.approvers).toBeUndefined();
  });

  it('runs: config.approvals is kept on the run and refused by field, no run created', async () => {
    const created = await api.post('/agent/runs', {
      prompt: 'careful',
      config: { approvals: RULES },
    });
    expect(created.status).toBe(200);
    const run = (await api.get(`/agent/runs/${created.body.run_id}`)).body;
    expect(run.agent_config.approvals).toEqual(STORED);
    const before = await count('runs');
    for (const [approvals, detail] of BAD_RULES) {
      const res = await api.post('/agent/runs', { prompt: 'x', config: { approvals } });
      expect({ status: res.status, detail: res.body.detail }).toEqual({
        status: 400,
        detail: expect.stringContaining(`config.approvals${detail}`),
      });
    }
    expect(await count('runs')).toBe(before);
  });

  it('schedules: agent_config.approvals is kept for the runs it starts and refused by field', async () => {
    const body = { name: 'nightly', cron_schedule: '0 3 * * *', prompt: 'tidy up' };
    const created = await api.post('/agent/schedules', {
      ...body,
      agent_config: { approvals: RULES },
    });
    expect(created.status).toBe(201);
    expect(created.body.agent_config.approvals).toEqual(STORED);
    const before = await count('schedules');
    const refused = await api.post('/agent/schedules', {
      ...body,
      agent_config: { approvals: BAD_RULES[0][0] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(
      /^agent_config\.approvals\.0\.command: is not a valid regular expression \(/,
    );
    expect(await count('schedules')).toBe(before);
  });

  it('publishes the rules in the OpenAPI document for generated clients', async () => {
    const doc = (await api.raw().get('/api/v1/openapi.json')).body;
    const schemas = doc.components.schemas;
    expect(schemas.ApprovalRule.properties).toEqual(
      expect.objectContaining({
        command: expect.any(Object),
        mcp_tool: expect.any(Object),
        write_outside: expect.any(Object),
        egress: expect.any(Object),
        effect: expect.objectContaining({ enum: ['ask', 'deny'] }),
      }),
    );
    for (const schema of ['AmbientAgentConfig', 'CreateEnvironmentRequest', 'CreateAgentRequest']) {
      expect(schemas[schema].properties.approvals).toMatchObject({
        'x-ambient-extension': true,
        type: 'array',
        items: { $ref: '#/components/schemas/ApprovalRule' },
      });
    }
    expect(schemas.CreateAgentRequest.properties.approvers).toMatchObject({ type: 'array' });
    expect(doc.paths['/agent/runs/{runId}/approvals/{approvalId}'].post).toMatchObject({
      operationId: 'decideRunApproval',
      'x-ambient-extension': true,
    });
  });
});
