import type { ProviderEndpoint } from '../src/modules/models';
import { AnthropicMessagesClient } from '../src/modules/workers/harness/models/anthropic-messages-client';
import type { ModelClient, ModelRequest } from '../src/modules/workers/harness/models/model-client';
import { OpenAiChatClient } from '../src/modules/workers/harness/models/openai-chat-client';
import type { Fetch } from '../src/modules/workers/harness/models/provider-fetch';
import { loadAverage, machineFacts } from './machine';
import { startModelServerProcess } from './model-server-client';
import { median, percentile, table } from './stats';

/**
 * `npm run bench:model-calls`: what one model call costs the process that makes it (a worker),
 * with the provider SDKs on the global fetch (undici, the baseline) and on the provider fetch
 * Ambient gives them (node:http with kept-alive connections), alternating in rounds of one run.
 * Each turn of each run makes one such call, so this is a per-turn cost. The model server (the
 * tests' fake one) runs in a process of its own; the CPU counted is this process's alone.
 * MODEL_CALLS (default 1000) calls per round, MODEL_CALL_ROUNDS (default 3) rounds, 10 at a time;
 * a request carries a conversation of a few turns and the run_command tool, as a run's does.
 */

const CALLS = Number(process.env.MODEL_CALLS ?? 1000);
const ROUNDS = Number(process.env.MODEL_CALL_ROUNDS ?? 3);
const WARM_UP_CALLS = 500;
const CONCURRENCY = 10;

type Api = 'chat_completions' | 'anthropic_messages';
const FETCHES: { name: string; fetch: Fetch | undefined }[] = [
  { name: 'global fetch (baseline)', fetch: globalThis.fetch },
  { name: 'provider fetch', fetch: undefined },
];

interface Round {
  cpuUs: number;
  userUs: number;
  systemUs: number;
  p50Ms: number;
}

const REQUEST: ModelRequest = {
  model: 'bench-model',
  maxOutputTokens: 1024,
  messages: [
    { role: 'system', content: 'You are a coding agent. '.repeat(40) },
    { role: 'user', content: 'Run the tests and fix what fails. '.repeat(10) },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'run_command', arguments: '{"command":"npm test"}' },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'ok 1 - passes\n'.repeat(60) },
  ],
  tools: [
    {
      type: 'function',
      function: {
        name: 'run_command',
        description: 'Runs a shell command in the workspace.',
        parameters: {
          type: 'object',
          properties: { command: { type: 'string' } },
          required: ['command'],
        },
      },
    },
  ],
};

function client(api: Api, baseUrl: string, fetch: Fetch | undefined): ModelClient {
  const provider: ProviderEndpoint = {
    name: 'bench',
    kind: api === 'anthropic_messages' ? 'ANTHROPIC' : 'OPENAI',
    api,
    baseUrl,
    apiKey: 'bench-key',
    apiKeyEnv: null,
  };
  return api === 'anthropic_messages'
    ? new AnthropicMessagesClient(provider, fetch)
    : new OpenAiChatClient(provider, fetch);
}

async function calls(model: ModelClient, count: number): Promise<number[]> {
  const latencies: number[] = [];
  const signal = new AbortController().signal;
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next++ < count) {
      const t0 = performance.now();
      const answer = await model.complete(REQUEST, signal);
      if (!answer.message) throw new Error('the model server answered without a message');
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return latencies;
}

async function round(model: ModelClient): Promise<Round> {
  await calls(model, WARM_UP_CALLS);
  const before = process.cpuUsage();
  const latencies = await calls(model, CALLS);
  const used = process.cpuUsage(before);
  return {
    cpuUs: (used.user + used.system) / CALLS,
    userUs: used.user / CALLS,
    systemUs: used.system / CALLS,
    p50Ms: percentile(latencies, 50),
  };
}

const us = (value: number) => `${value.toFixed(0)} µs`;

async function main(): Promise<void> {
  const facts = machineFacts();
  const server = await startModelServerProcess();
  // Every call is answered with a tool call, as a run's first turn is.
  const step = { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }] };
  await server.scriptPrompt(
    /./,
    Array.from({ length: 8 }, () => step),
  );
  const results = new Map<string, Round[]>();
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const api of ['chat_completions', 'anthropic_messages'] as Api[]) {
        // The order alternates from round to round, so neither always runs on a warmer process.
        const order = r % 2 === 0 ? FETCHES : [...FETCHES].reverse();
        for (const { name, fetch } of order) {
          const baseUrl =
            api === 'anthropic_messages' ? server.url.replace(/\/v1$/, '') : server.url;
          const key = `${api}\t${name}`;
          results.set(key, [...(results.get(key) ?? []), await round(client(api, baseUrl, fetch))]);
        }
      }
    }
  } finally {
    server.close();
  }
  const rows: string[][] = [];
  const verdicts: string[] = [];
  for (const api of ['chat_completions', 'anthropic_messages'] as Api[]) {
    const baseline = results.get(`${api}\t${FETCHES[0].name}`)!;
    for (const { name } of FETCHES) {
      const rounds = results.get(`${api}\t${name}`)!;
      const ratios = rounds.map((x, i) => x.cpuUs / baseline[i].cpuUs);
      rows.push([
        api,
        name,
        `${us(median(rounds.map((x) => x.cpuUs)))} (${rounds.map((x) => x.cpuUs.toFixed(0)).join(', ')})`,
        `${us(median(rounds.map((x) => x.userUs)))} / ${us(median(rounds.map((x) => x.systemUs)))}`,
        `${median(rounds.map((x) => x.p50Ms)).toFixed(2)} ms`,
        name === FETCHES[0].name ? '1' : ratios.map((x) => x.toFixed(2)).join(', '),
      ]);
      if (name !== FETCHES[0].name) {
        verdicts.push(
          `${api}: the provider fetch's CPU per call / the global fetch's, per round: ${ratios.map((x) => x.toFixed(2)).join(', ')}`,
        );
      }
    }
  }
  console.log('\nAmbient model-call benchmark');
  console.log(facts.join('\n'));
  console.log(`load average at end: ${loadAverage()}`);
  console.log(
    `${ROUNDS} rounds of ${WARM_UP_CALLS} warm-up + ${CALLS} measured calls, ${CONCURRENCY} at a time, ` +
      'each configuration in turn (the order alternating); the model server in its own process\n',
  );
  console.log(
    table([
      [
        'API',
        'fetch',
        "this process's CPU per call (median; rounds)",
        'user / system',
        'call p50',
        'CPU / baseline, per round',
      ],
      ...rows,
    ]),
  );
  console.log(`\n${verdicts.join('\n')}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
