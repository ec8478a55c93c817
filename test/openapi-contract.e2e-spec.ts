import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';

type Json = Record<string, unknown>;
type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: unknown;
  items?: Schema;
  allOf?: unknown[];
  oneOf?: unknown[];
  $ref?: string;
  enum?: unknown[];
  discriminator?: { propertyName: string; mapping?: Record<string, string> };
  minimum?: number;
  maximum?: number;
  default?: unknown;
  required?: string[];
};

/** Every `$ref` in the document with where it was found. */
function refsOf(node: unknown, at = '#'): { ref: string; at: string }[] {
  if (Array.isArray(node)) return node.flatMap((v, i) => refsOf(v, `${at}/${i}`));
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node as Json).flatMap(([key, value]) =>
    key === '$ref' && typeof value === 'string'
      ? [{ ref: value, at }]
      : refsOf(value, `${at}/${key}`),
  );
}

describe('the published OpenAPI document is generator-grade (api role)', () => {
  let doc: Json & {
    paths: Record<string, Record<string, Json>>;
    components: { schemas: Record<string, Schema> };
  };

  const { app } = useTestApp('openapi_contract', ['api']);

  beforeAll(async () => {
    const res = await apiClient(app.baseUrl, app.apiKey).get('/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  });

  const schemas = () => doc.components.schemas;

  it('passes a real OpenAPI validator (@apidevtools/swagger-parser)', () => {
    // The validator's dependencies are ES modules, which jest's CommonJS runtime cannot load.
    const dir = mkdtempSync(join(tmpdir(), 'ambient-openapi-'));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const result = spawnSync(
      process.execPath,
      [
        '-e',
        `require('@apidevtools/swagger-parser').validate(process.argv[1]).then(
           () => console.log('valid'),
           (err) => { console.error(err.message); process.exit(1); })`,
        file,
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    rmSync(dir, { recursive: true, force: true });
    expect({ status: result.status, stderr: result.stderr.slice(0, 4000) }).toEqual({
      status: 0,
      stderr: '',
    });
  });

  it('names every operation once, so generated clients get no numbered duplicates', () => {
    const ids = Object.values(doc.paths).flatMap((item) =>
      Object.values(item as Record<string, { operationId?: string }>)
        .map((operation) => operation.operationId)
        .filter((id): id is string => Boolean(id)),
    );
    const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
    expect(repeated).toEqual([]);
    expect(doc.paths['/agent'].get.operationId).toBe('listAgents');
    expect(doc.paths['/agent/identities'].get.operationId).toBe('listAgentIdentities');
  });

  it('resolves every $ref', () => {
    const dangling = refsOf(doc).filter(
      ({ ref }) => !(ref.startsWith('#/components/schemas/') && schemas()[ref.split('/').pop()!]),
    );
    expect(dangling).toEqual([]);
    expect(schemas().MCPServerConfig).toBeDefined();
  });

  it('types every property: no bare `type: object` (a string field typed object shows as one)', () => {
    const bare: string[] = [];
    const check = (where: string, s: Schema | undefined) => {
      if (!s || s.$ref) return;
      if (
        s.type === 'object' &&
        !s.properties &&
        s.additionalProperties === undefined &&
        !s.allOf &&
        !s.oneOf
      ) {
        bare.push(where);
      }
      if (s.type === 'array') check(`${where}[]`, s.items);
    };
    for (const [name, schema] of Object.entries(schemas())) {
      for (const [prop, s] of Object.entries(schema.properties ?? {})) check(`${name}.${prop}`, s);
    }
    expect(bare).toEqual([]);
    for (const name of ['CreateAgentRequest', 'UpdateAgentRequest']) {
      const props = schemas()[name].properties!;
      for (const field of [
        'description',
        'prompt',
        'base_model',
        'environment_id',
        'worker_host',
        'default_runner_uid',
      ]) {
        expect({ name, field, type: props[field].type }).toEqual({ name, field, type: 'string' });
      }
      expect(props.on_behalf_of_enabled.type).toBe('boolean');
    }
  });

  it('declares the Oz enums and uses them', () => {
    expect(schemas().RunState.enum).toEqual(
      expect.arrayContaining(['QUEUED', 'INPROGRESS', 'SUCCEEDED', 'CANCELLED']),
    );
    expect(schemas().RunSourceType.enum).toEqual(
      expect.arrayContaining(['API', 'SCHEDULED_AGENT']),
    );
    expect(schemas().PlatformErrorCode.enum).toEqual(
      expect.arrayContaining(['invalid_request', 'conflict', 'internal_error']),
    );
    const refOf = (s: Schema) => s.$ref ?? (s.allOf?.[0] as Schema | undefined)?.$ref;
    const runItem = schemas().RunItem.properties!;
    expect(refOf(runItem.state)).toBe('#/components/schemas/RunState');
    expect(refOf(runItem.source)).toBe('#/components/schemas/RunSourceType');
    expect(refOf(schemas().RunStatusMessage.properties!.error_code)).toBe(
      '#/components/schemas/PlatformErrorCode',
    );
  });

  it('bounds `limit` with a default wherever it is a parameter', () => {
    const limits = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.values(item).flatMap((op) =>
        ((op.parameters as { name: string; in: string; schema: Schema }[]) ?? [])
          .filter((p) => p.name === 'limit')
          .map((p) => ({ path, schema: p.schema })),
      ),
    );
    expect(limits.length).toBeGreaterThan(0);
    for (const { path, schema } of limits) {
      expect({ path, type: schema.type }).toEqual({ path, type: 'integer' });
      expect(schema.minimum).toBe(1);
      expect(schema.maximum).toEqual(expect.any(Number));
      expect(schema.default).toEqual(expect.any(Number));
    }
    const runs = limits.find((l) => l.path === '/agent/runs')!.schema;
    expect([runs.minimum, runs.maximum, runs.default]).toEqual([1, 500, 20]);
  });

  it('describes unions as oneOf with the Oz discriminators, nested steps typed', () => {
    const artifact = schemas().ArtifactItem;
    expect(artifact.oneOf).toHaveLength(5);
    expect(artifact.discriminator).toMatchObject({ propertyName: 'artifact_type' });
    expect(Object.keys(artifact.discriminator!.mapping!)).toEqual(
      expect.arrayContaining(['PLAN', 'PULL_REQUEST', 'SCREENSHOT', 'FILE', 'EXTERNAL_REFERENCE']),
    );
    expect(schemas().ConversationContentBlock.discriminator).toMatchObject({
      propertyName: 'type',
    });
    expect(schemas().ConversationContentBlock.oneOf).toHaveLength(4);
    expect(schemas().ConversationStep.properties!.steps.items!.$ref).toBe(
      '#/components/schemas/ConversationStep',
    );
    expect(schemas().ConversationResponse).toBeDefined();
    const artifactResponse = doc.paths['/agent/artifacts/{artifactUid}'].get.responses as Json;
    expect(artifactResponse['200']).toMatchObject({
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/ArtifactResponse' } },
      },
    });
    expect(schemas().ArtifactResponse.discriminator).toMatchObject({
      propertyName: 'artifact_type',
    });
  });

  it('gives every operation a success schema and Error responses', () => {
    const problems: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const responses = op.responses as Record<
          string,
          { content?: Record<string, { schema?: unknown }> }
        >;
        const success = Object.keys(responses).filter((c) => /^[23]/.test(c));
        if (success.length === 0) problems.push(`${method} ${path}: no success response`);
        for (const code of success.filter((c) => c.startsWith('2') && c !== '204')) {
          if (!Object.values(responses[code].content ?? {}).some((c) => c.schema)) {
            problems.push(`${method} ${path}: ${code} without a schema`);
          }
        }
        const errorRef = responses.default?.content?.['application/problem+json']?.schema;
        if (!errorRef) problems.push(`${method} ${path}: no default Error response`);
        if ((op.security as unknown[] | undefined)?.length && !responses['401']) {
          problems.push(`${method} ${path}: authenticated but no 401`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("marks Ambient's own operations and fields, and keeps the Oz names", () => {
    expect(doc.paths['/harness-support/start'].post['x-ambient-extension']).toBe(true);
    expect(doc.paths['/secrets'].get['x-ambient-extension']).toBe(true);
    expect(doc.paths['/usage'].get['x-ambient-extension']).toBe(true);
    expect(doc.paths['/agent/runs'].get['x-ambient-extension']).toBeUndefined();
    // The live stream: Server-Sent Events, its errors in the Oz Error model.
    const stream = doc.paths['/agent/runs/{runId}/stream'].get as {
      'x-ambient-extension'?: boolean;
      responses: Record<string, { content: Record<string, unknown> }>;
    };
    expect(stream['x-ambient-extension']).toBe(true);
    expect(Object.keys(stream.responses['200'].content)).toEqual(['text/event-stream']);
    expect(Object.keys(stream.responses['404'].content)).toEqual(['application/problem+json']);
    for (const name of [
      'RunItem',
      'RunAgentRequest',
      'AmbientAgentConfig',
      'Error',
      'ScheduledAgentItem',
    ]) {
      expect(schemas()[name]).toBeDefined();
    }
    expect(schemas().Error.properties!.trace_id).toBeDefined();
    expect(schemas().RunCreatorInfo.properties!.photo_url).toBeDefined();
    expect(schemas().AgentSkill.properties!.bundled_skill_id).toBeDefined();
    expect(schemas().RunItem.properties!.trigger_url).toBeDefined();
    expect(schemas().ConversationMessage.properties!.request_id).toBeDefined();
  });

  it('marks extension fields and schemas (environment network/resources, health sandbox)', () => {
    const mark = (node: unknown) => (node as Json | undefined)?.['x-ambient-extension'];
    for (const name of [
      'EnvironmentConfig',
      'CreateEnvironmentRequest',
      'UpdateEnvironmentRequest',
    ]) {
      expect([name, mark(schemas()[name].properties!.network)]).toEqual([name, true]);
      expect([name, mark(schemas()[name].properties!.resources)]).toEqual([name, true]);
    }
    expect(mark(schemas().SandboxResources)).toBe(true);
    expect(mark(schemas().SandboxInfo)).toBe(true);
    expect(mark(schemas().HealthResponse.properties!.sandbox)).toBe(true);
    expect(mark(schemas().Environment.properties!.access)).toBe(true);
    expect(mark(schemas().HarnessAuthSecrets.properties!.gemini_auth_secret_name)).toBe(true);
    expect(mark(schemas().RunStatusMessage.properties!.debug_agent_active)).toBe(true);
    // Oz fields stay unmarked.
    expect(mark(schemas().EnvironmentConfig.properties!.setup_commands)).toBeUndefined();
    expect(mark(schemas().RunItem.properties!.trigger_url)).toBeUndefined();
  });

  it('documents the health probes as public extensions answering the terminus schema', () => {
    const result = { $ref: '#/components/schemas/HealthCheckResult' };
    for (const path of ['/health/live', '/health/ready']) {
      const probe = doc.paths[path].get as Json & { responses: Record<string, Json> };
      expect([path, probe['x-ambient-extension'], probe.security]).toEqual([path, true, undefined]);
      expect(probe.responses['200']).toMatchObject({
        content: { 'application/json': { schema: result } },
      });
    }
    const ready = doc.paths['/health/ready'].get as Json & { responses: Record<string, Json> };
    expect(ready.responses['503']).toMatchObject({
      content: { 'application/json': { schema: result } },
    });
    expect((schemas().HealthCheckResult as Json)['x-ambient-extension']).toBe(true);
    expect(schemas().HealthCheckResult.required).toEqual(['status', 'details']);
    expect((schemas().HealthIndicator as Json)['x-ambient-extension']).toBe(true);
  });

  it('has the Oz redirect and handoff operations, unmarked, and ScheduledAgentItem.environment', () => {
    const session = doc.paths['/agent/sessions/{sessionUuid}/redirect'].get;
    expect(session.operationId).toBe('getSessionRedirect');
    expect(session['x-ambient-extension']).toBeUndefined();
    const conversation = doc.paths['/agent/conversations/{conversationId}/redirect'].get;
    expect(conversation.operationId).toBe('getConversationRedirect');
    const handoff = doc.paths['/agent/runs/{runId}/handoff/attachments'].get;
    expect(handoff.operationId).toBe('listHandoffAttachments');
    expect(handoff['x-ambient-extension']).toBeUndefined();
    expect(schemas().HandoffAttachment.required).toEqual(
      expect.arrayContaining(['attachment_id', 'download_url', 'filename']),
    );
    expect(schemas().SessionRedirectResponse.properties!.conversation_id).toBeDefined();
    expect(schemas().ScheduledAgentItem.properties!.environment).toBeDefined();
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/run-attachments'))).toBe(false);
  });
});
