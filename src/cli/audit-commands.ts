import { API_OPTION_HELP, API_OPTIONS, callApi, required } from './api-http';
import { CliCommand } from './cli-command';
import { CommandError } from './cli-errors';

/** Events per request (the API's maximum page). */
const PAGE_SIZE = 200;
/** A bound on the pages one export reads (200 million events), so a broken cursor cannot loop. */
const MAX_PAGES = 1_000_000;

interface AuditPage {
  events: unknown[];
  page_info: { has_next_page: boolean; next_cursor?: string };
}

export const auditExportCommand: CliCommand = {
  name: 'audit export',
  synopsis:
    'audit export --since <time> [--until <time>] [--action <a>] [--url <base>] [--key <key>]',
  summary: "Print the team's audit events as NDJSON (one JSON object per line), newest first.",
  details: [
    '',
    'Options:',
    '  --since <time>    RFC 3339, inclusive, e.g. 2026-01-01T00:00:00Z',
    '  --until <time>    RFC 3339, exclusive (default: now)',
    '  --action <a>      only this action ("secret.update") or resource ("secret.*")',
    ...API_OPTION_HELP,
    '',
    'Reads GET /audit-events page by page (a team admin key); each line is an event as the',
    'API returns it. Redirect to a file to archive it: ... audit export --since ... > audit.ndjson',
  ],
  options: {
    ...API_OPTIONS,
    since: { type: 'string' },
    until: { type: 'string' },
    action: { type: 'string' },
  },
  async run(values, io) {
    const query = new URLSearchParams({ since: required(values, 'since') });
    if (typeof values.until === 'string') query.set('until', values.until);
    if (typeof values.action === 'string') query.set('action', values.action);
    query.set('limit', String(PAGE_SIZE));
    let count = 0;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const { events, page_info } = (await callApi(
        values,
        io,
        'GET',
        `/audit-events?${query.toString()}`,
      )) as AuditPage;
      for (const event of events) io.out(JSON.stringify(event));
      count += events.length;
      if (!page_info.has_next_page) {
        io.err(`${count} audit event(s) exported`);
        return;
      }
      if (!page_info.next_cursor) throw new CommandError('the API sent a page without its cursor');
      query.set('cursor', page_info.next_cursor);
    }
    throw new CommandError(`stopped after ${MAX_PAGES} pages`);
  },
};

export const AUDIT_COMMANDS: CliCommand[] = [auditExportCommand];
