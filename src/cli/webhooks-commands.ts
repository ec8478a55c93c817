import {
  API_OPTION_HELP,
  API_OPTIONS,
  callApi,
  JSON_OPTION,
  JSON_OPTION_HELP,
  printAnswer,
  printJson,
  required,
} from './api-http';
import { CliCommand } from './cli-command';
import { CommandError, UsageError } from './cli-errors';

const ids = { factory: { type: 'string' }, webhook: { type: 'string' } } as const;
const idHelp = ['  --factory <uid>', '  --webhook <uid>'];
const path = (values: Record<string, unknown>, rest = '') =>
  `/factory/${required(values as never, 'factory')}/webhooks/${required(values as never, 'webhook')}${rest}`;

export const webhooksListCommand: CliCommand = {
  name: 'webhooks list',
  synopsis: 'webhooks list --factory <uid> [--json]',
  summary: "List a factory's webhooks: uid, state, auth mode, name, URL.",
  details: ['', 'Options:', '  --factory <uid>', JSON_OPTION_HELP, ...API_OPTION_HELP],
  options: { ...API_OPTIONS, ...JSON_OPTION, factory: { type: 'string' } },
  async run(values, io) {
    const answer = (await callApi(
      values,
      io,
      'GET',
      `/factory/${required(values, 'factory')}/webhooks`,
    )) as {
      webhooks: { uid: string; enabled: boolean; auth_mode: string; name: string; url: string }[];
    };
    printAnswer(values, io, answer, ({ webhooks }) => {
      for (const w of webhooks)
        io.out(
          `${w.uid}  ${w.enabled ? 'enabled ' : 'disabled'}  ${w.auth_mode.padEnd(9)}  ${w.name}  ${w.url}`,
        );
    });
  },
};

export const webhooksCreateCommand: CliCommand = {
  name: 'webhooks create',
  synopsis:
    'webhooks create --factory <uid> --name <name> [--auth-mode token|url_token|signature] [--scheme <s>] [--provider-secret <s>] [--secret-name <NAME>] [--delivery-id-header <H>]',
  summary: 'Create a webhook; its URL and secret are printed once.',
  details: [
    '',
    'Options:',
    '  --factory <uid>',
    '  --name <name>',
    '  --auth-mode <m>            token (default), url_token or signature',
    '  --scheme <s>               a signature scheme the server registers (`webhooks schemes`)',
    '  --provider-secret <s>      the provider signing secret (blank standard_webhooks: generated)',
    '  --secret-name <NAME>       team secret to create (default WEBHOOK_<NAME>_SECRET)',
    '  --delivery-id-header <H>   header carrying the sender delivery id',
    ...API_OPTION_HELP,
  ],
  options: {
    ...API_OPTIONS,
    factory: { type: 'string' },
    name: { type: 'string' },
    'auth-mode': { type: 'string' },
    scheme: { type: 'string' },
    'provider-secret': { type: 'string' },
    'secret-name': { type: 'string' },
    'delivery-id-header': { type: 'string' },
  },
  async run(values, io) {
    const body: Record<string, unknown> = { name: required(values, 'name') };
    const map = {
      'auth-mode': 'auth_mode',
      scheme: 'signature_scheme',
      'provider-secret': 'provider_secret',
      'secret-name': 'secret_name',
      'delivery-id-header': 'delivery_id_header',
    } as const;
    for (const [option, field] of Object.entries(map))
      if (values[option] !== undefined) body[field] = values[option];
    const created = (await callApi(
      values,
      io,
      'POST',
      `/factory/${required(values, 'factory')}/webhooks`,
      body,
    )) as { url: string; secret: string | null };
    printJson(io, created);
    if (created.secret) io.err('The secret (and a url_token URL) is shown only now; store it.');
  },
};

/** The served OpenAPI document lists the registered schemes (built-in and extension ones). */
export const webhooksSchemesCommand: CliCommand = {
  name: 'webhooks schemes',
  synopsis: 'webhooks schemes',
  summary: 'List the signature schemes the server registers (built-in and extension ones).',
  details: ['', 'Options:', ...API_OPTION_HELP],
  options: { ...API_OPTIONS },
  async run(values, io) {
    const document = (await callApi(values, io, 'GET', '/openapi.json')) as {
      components?: {
        schemas?: Record<string, { properties?: Record<string, { enum?: string[] }> }>;
      };
    };
    const schemes =
      document.components?.schemas?.CreateWebhookRequest?.properties?.signature_scheme?.enum;
    if (!schemes) throw new CommandError('the server does not list its signature schemes');
    for (const scheme of schemes) io.out(scheme);
  },
};

function action(name: string, summary: string, method: string, suffix: string): CliCommand {
  return {
    name: `webhooks ${name}`,
    synopsis: `webhooks ${name} --factory <uid> --webhook <uid>`,
    summary,
    details: ['', 'Options:', ...idHelp, ...API_OPTION_HELP],
    options: { ...API_OPTIONS, ...ids },
    async run(values, io) {
      const result = await callApi(values, io, method, path(values, suffix));
      if (result === null) io.out('done');
      else printJson(io, result);
    },
  };
}

export const webhooksDeliveriesCommand: CliCommand = {
  name: 'webhooks deliveries',
  synopsis:
    'webhooks deliveries --factory <uid> --webhook <uid> [--limit <n>] [--cursor <c>] [--json]',
  summary:
    'The delivery log, newest first: entry id, time, status, size, delivery id, then each run started (or why none could be).',
  details: [
    '',
    'Options:',
    ...idHelp,
    '  --limit <n>    1-100 (default 50)',
    '  --cursor <c>   the next page (printed after a page that has one)',
    JSON_OPTION_HELP,
    ...API_OPTION_HELP,
  ],
  options: {
    ...API_OPTIONS,
    ...JSON_OPTION,
    ...ids,
    limit: { type: 'string' },
    cursor: { type: 'string' },
  },
  async run(values, io) {
    const params = new URLSearchParams();
    if (values.limit) params.set('limit', String(values.limit));
    if (values.cursor) params.set('cursor', String(values.cursor));
    const query = params.size ? `?${params}` : '';
    const answer = (await callApi(values, io, 'GET', path(values, `/deliveries${query}`))) as {
      deliveries: {
        id: string;
        received_at: string;
        status: string;
        size_bytes: number;
        delivery_id: string | null;
        evaluated_at?: string | null;
        runs?: DeliveryRun[];
      }[];
      page_info: { has_next_page: boolean; next_cursor: string };
    };
    printAnswer(values, io, answer, ({ deliveries, page_info: pageInfo }) => {
      for (const d of deliveries)
        io.out(
          `${d.id}  ${d.received_at}  ${d.status.padEnd(23)}  ${String(d.size_bytes).padStart(7)} B  ${d.delivery_id ?? '-'}${outcomeOf(d)}`,
        );
      // On stderr, so the listing stays one entry per line.
      if (pageInfo.has_next_page) io.err(`more: --cursor ${pageInfo.next_cursor}`);
    });
  },
};

interface DeliveryRun {
  automation: string;
  run_id: string | null;
  error: string | null;
}

/** Each automation's run on the delivery's log line, or why it has none (nothing if none matched). */
function outcomeOf(d: { runs?: DeliveryRun[] }): string {
  const runs = (d.runs ?? []).map((r) =>
    r.run_id
      ? `${r.automation}: run ${r.run_id}`
      : `${r.automation}: no run: ${r.error ?? 'not started'}`,
  );
  return runs.length ? `  ${runs.join('; ')}` : '';
}

export const webhooksTestFilterCommand: CliCommand = {
  name: 'webhooks test-filter',
  synopsis:
    'webhooks test-filter --factory <uid> --webhook <uid> --delivery <entry id> (--automation <name> | --filter <json>)',
  summary:
    'Would an automation (or an inline trigger filter) fire for a stored delivery, and which check fails?',
  details: [
    '',
    'Options:',
    ...idHelp,
    '  --delivery <id>      log entry id (webhooks deliveries)',
    '  --automation <name>',
    '  --filter <json>      {"webhook_ids":[…],"payload":{…}}',
    ...API_OPTION_HELP,
  ],
  options: {
    ...API_OPTIONS,
    ...ids,
    delivery: { type: 'string' },
    automation: { type: 'string' },
    filter: { type: 'string' },
  },
  async run(values, io) {
    let body: Record<string, unknown>;
    if (values.filter !== undefined) {
      try {
        body = { filter: JSON.parse(String(values.filter)) };
      } catch {
        throw new UsageError('--filter must be JSON');
      }
    } else body = { automation: required(values, 'automation') };
    printJson(
      io,
      await callApi(
        values,
        io,
        'POST',
        path(values, `/deliveries/${required(values, 'delivery')}/test-filter`),
        body,
      ),
    );
  },
};

export const WEBHOOKS_COMMANDS = [
  webhooksListCommand,
  webhooksCreateCommand,
  webhooksSchemesCommand,
  action('get', 'Show one webhook (its URL and settings; never the secret).', 'GET', ''),
  action('enable', "Enable a webhook (takes its team secret's current value).", 'POST', '/enable'),
  action('disable', 'Disable a webhook: senders get 404 at once.', 'POST', '/disable'),
  action(
    'rotate-secret',
    'Rotate the secret: the new one is printed once, the old one fails at once.',
    'POST',
    '/rotate-secret',
  ),
  action(
    'delete',
    'Delete a webhook: senders get 404; automations selecting it never fire.',
    'DELETE',
    '',
  ),
  webhooksDeliveriesCommand,
  webhooksTestFilterCommand,
];
