import { Webhook } from 'standardwebhooks';
import { EgressGuard } from '../../common/egress/egress-guard';
import { GuardedFetch, guardedFetch } from '../../common/egress/guarded-fetch';
import type { NotificationFormat } from './notification-events';
import { endpointUrlProblem } from './endpoint-url';
import { slackBody } from './notification-payloads';

/** One attempt's outcome: the response status when there was one, else why there was none. */
export interface AttemptOutcome {
  ok: boolean;
  responseCode: number | null;
  error: string | null;
}

export interface OutgoingNotification {
  url: string;
  format: NotificationFormat;
  secret: string;
  messageId: string;
  payload: string;
}

/**
 * Sends one notification as a Standard Webhooks message: `webhook-id`, `webhook-timestamp` and
 * `webhook-signature` (HMAC-SHA256 of `id.timestamp.body` with the endpoint's secret). The
 * connection goes through the egress guard; redirects are not followed (a 3xx is a failure).
 */
export class NotificationSender {
  private readonly fetch: GuardedFetch;

  constructor(
    private readonly guard: EgressGuard,
    private readonly timeoutMs: number,
  ) {
    this.fetch = guardedFetch(guard);
  }

  async send(message: OutgoingNotification, now = new Date()): Promise<AttemptOutcome> {
    const problem = await endpointUrlProblem(this.guard, message.url);
    if (problem) return { ok: false, responseCode: null, error: `url ${problem}` };
    const body = message.format === 'slack' ? slackBody(message.payload) : message.payload;
    const signature = new Webhook(message.secret).sign(message.messageId, now, body);
    try {
      const response = await this.fetch(message.url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Ambient-Notifications',
          'webhook-id': message.messageId,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
      });
      await response.body?.cancel();
      const ok = response.status >= 200 && response.status < 300;
      return { ok, responseCode: response.status, error: ok ? null : `HTTP ${response.status}` };
    } catch (err) {
      return { ok: false, responseCode: null, error: describe(err) };
    }
  }
}

function describe(err: unknown): string {
  const error = err as Error & { cause?: { code?: string; message?: string } };
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timed out';
  const cause = error.cause?.code ?? error.cause?.message;
  return (cause ? `${error.message} (${cause})` : error.message).slice(0, 1000);
}
