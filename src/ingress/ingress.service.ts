import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { UID_PATTERN } from '../common/ids';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { SecretCipher } from '../modules/secrets/secret-cipher';
import { DeliveryLog } from '../modules/webhooks/delivery-log.repository';
import type { DeliveryStatus } from '../modules/webhooks/entities/webhook-delivery.entity';
import { constantTimeEqualText } from '../modules/webhooks/verifiers/hmac';
import { SignatureVerifierRegistry, SignedContent } from '../modules/webhooks/verifiers';
import type { IngressWebhook } from '../modules/webhooks/webhook-store.repository';
import { AmbientMetrics } from '../modules/metrics/ambient-metrics';
import { AcceptedDeliveryWriter } from './accepted-delivery-writer';
import { readCappedBody } from './body-reader';
import { deliveryIdentity } from './delivery-identity';
import { sendAccepted, sendProblem } from './ingress-responses';
import { IngressRateLimiter } from './rate-limiter';
import { WebhookLookup } from './webhook-lookup';

const RETRY_AFTER_UNAVAILABLE = '5';
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * One delivery, start to end: find the webhook (404), authenticate (401), read at most 256 KB
 * (413), apply the per-webhook budget (429), parse JSON (400), then commit the delivery in MySQL
 * and only then answer 202. Every outcome but 404, 405, 429 and 503 lands in the delivery log.
 */
@Injectable()
export class IngressService {
  private readonly logger = new Logger('Ingress');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly webhooks: WebhookLookup,
    private readonly log: DeliveryLog,
    private readonly accepted: AcceptedDeliveryWriter,
    private readonly cipher: SecretCipher,
    private readonly limiter: IngressRateLimiter,
    private readonly metrics: AmbientMetrics,
    private readonly verifiers: SignatureVerifierRegistry,
  ) {}

  async handle(req: Request, res: Response, uid: string, urlToken?: string): Promise<void> {
    if (req.method !== 'POST') {
      return sendProblem(res, 405, 'operation_not_supported', 'webhooks accept POST only', {
        Allow: 'POST',
      });
    }
    const receivedAt = new Date();
    let webhook: (IngressWebhook & { secret?: string }) | null = null;
    if (UID_PATTERN.test(uid)) {
      try {
        webhook = await this.webhooks.find(uid);
      } catch (err) {
        return this.unavailable(res, err);
      }
    }
    if (!webhook || (urlToken !== undefined && webhook.authMode !== 'url_token')) {
      return sendProblem(
        res,
        404,
        'resource_not_found',
        'no such webhook (unknown, disabled or deleted)',
      );
    }
    let secret: string;
    try {
      // Decrypted once per cached lookup, not per delivery.
      secret = webhook.secret ??= this.cipher.decrypt(webhook.secretCiphertext, webhook.teamId);
    } catch (err) {
      return this.unavailable(res, err);
    }
    const header = (name: string): string | undefined => {
      const value = req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    };

    if (webhook.authMode !== 'signature') {
      const presented =
        webhook.authMode === 'token' ? bearerToken(header('authorization')) : urlToken;
      if (!presented || !constantTimeEqualText(secret, presented)) {
        const size = Number(header('content-length')) || 0;
        return this.rejectAuth(
          res,
          webhook,
          size,
          receivedAt,
          presented ? 'the token does not match' : 'no token was sent',
        );
      }
    }

    let body: Buffer;
    try {
      const read = await readCappedBody(req);
      if (read.tooLarge) {
        await this.logRejected(webhook.id, 'rejected_too_large', null, read.size, receivedAt);
        return sendProblem(res, 413, 'invalid_request', 'the body is larger than 256 KB');
      }
      body = read.body;
    } catch {
      return; // the client went away; there is no one to answer
    }

    const scheme = webhook.signatureScheme;
    const verifier = scheme ? (this.verifiers.get(scheme) ?? null) : null;
    // A scheme whose extension is no longer loaded verifies nothing: refused, never let through.
    if (scheme && !verifier) {
      const reason = `signature scheme "${scheme}" is not registered in this process`;
      return this.rejectAuth(res, webhook, body.length, receivedAt, reason);
    }
    let signed: SignedContent | null = null;
    if (verifier) {
      const verdict = verifier.verify({ body, header, secret, nowMs: receivedAt.getTime() });
      if (!verdict.ok)
        return this.rejectAuth(res, webhook, body.length, receivedAt, verdict.reason);
      signed = verdict.signed;
    }

    const budget = await this.limiter.take(
      webhook.id,
      'deliveries',
      this.config.webhooks.deliveriesPerMinute,
    );
    if (!budget.allowed) {
      this.metrics.webhookRateLimited('deliveries');
      return sendProblem(
        res,
        429,
        'resource_unavailable',
        `more than ${this.config.webhooks.deliveriesPerMinute} deliveries per minute`,
        { 'Retry-After': String(budget.retryAfterSeconds) },
      );
    }

    let json: unknown;
    try {
      json = JSON.parse(strictUtf8.decode(body));
    } catch {
      await this.logRejected(webhook.id, 'rejected_invalid_json', null, body.length, receivedAt);
      return sendProblem(res, 400, 'invalid_request', 'the body is not valid JSON');
    }
    const identity = deliveryIdentity({
      header,
      configuredHeader: webhook.deliveryIdHeader,
      verifier,
      signed,
      json,
      body,
    });
    try {
      const { duplicate } = await this.accepted.record({
        webhookId: webhook.id,
        deliveryId: identity.id,
        contentKey: identity.contentKey,
        providerKey: identity.providerKey,
        senderKey: identity.senderKey,
        body,
        receivedAt,
      });
      this.metrics.webhookDelivery(duplicate ? 'duplicate' : 'accepted');
    } catch (err) {
      return this.unavailable(res, err);
    }
    sendAccepted(res, identity.id);
  }

  private async rejectAuth(
    res: Response,
    webhook: IngressWebhook,
    size: number,
    receivedAt: Date,
    reason: string,
  ) {
    const budget = await this.limiter.take(
      webhook.id,
      'auth_failures',
      this.config.webhooks.authFailuresPerMinute,
    );
    if (!budget.allowed) {
      this.metrics.webhookRateLimited('auth_failures');
      return sendProblem(
        res,
        429,
        'resource_unavailable',
        'too many failed authentication attempts',
        { 'Retry-After': String(budget.retryAfterSeconds) },
      );
    }
    await this.logRejected(webhook.id, 'rejected_auth', null, size, receivedAt);
    sendProblem(res, 401, 'authentication_required', `authentication failed: ${reason}`);
  }

  private async logRejected(
    webhookId: string,
    status: Exclude<DeliveryStatus, 'accepted'>,
    deliveryId: string | null,
    size: number,
    at: Date,
  ) {
    this.metrics.webhookDelivery(status);
    await this.log.recordRejected(webhookId, status, deliveryId, size, at).catch((err: Error) => {
      this.logger.warn(`could not log a ${status} delivery: ${err.message}`);
    });
  }

  private unavailable(res: Response, err: unknown): void {
    this.logger.error(`delivery not accepted: ${(err as Error)?.message ?? String(err)}`);
    sendProblem(
      res,
      503,
      'resource_unavailable',
      'the delivery could not be stored; retry shortly',
      { 'Retry-After': RETRY_AFTER_UNAVAILABLE },
    );
  }
}

function bearerToken(header: string | undefined): string | undefined {
  const match = header ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
  return match?.[1];
}
