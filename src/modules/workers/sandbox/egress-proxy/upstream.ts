import { readFileSync } from 'node:fs';
import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { pinnedLookup, type CheckedTarget } from '../../../../common/egress/egress-guard';
import { refuseResponse } from './proxy-responses';

/**
 * The buffer size of the streams a forwarded body goes through (the client's TLS socket, the
 * requests and responses, the upstream socket), instead of Node's 16 KiB: a socket read brings
 * up to 64 KiB, which then no longer overflows the next stream's buffer and pauses the read each
 * time (about a fifth less of the proxy's CPU per intercepted GiB in bench:egress).
 */
export const BODY_HIGH_WATER_MARK = 64 * 1024;

/** Headers of one hop that a proxy must not pass on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'upgrade',
]);

/** Raw headers without the hop-by-hop ones (and those the Connection header names). */
export function endToEndHeaders(rawHeaders: readonly string[]): string[] {
  const named = new Set(HOP_BY_HOP);
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].toLowerCase() === 'connection') {
      for (const token of rawHeaders[i + 1].split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const kept: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (!named.has(rawHeaders[i].toLowerCase())) kept.push(rawHeaders[i], rawHeaders[i + 1]);
  }
  return kept;
}

/**
 * The trust for upstream TLS: Node's own (with NODE_EXTRA_CA_CERTS) when `extra` is empty;
 * otherwise Node's roots, NODE_EXTRA_CA_CERTS' file and `extra` (a `ca` option replaces the
 * default store, so the extra file has to be read again).
 */
function upstreamTrust(extra: readonly string[] | undefined): string[] | undefined {
  if (!extra || extra.length === 0) return undefined;
  const file = process.env.NODE_EXTRA_CA_CERTS;
  let fromFile: string[] = [];
  if (file) {
    try {
      fromFile = [readFileSync(file, 'utf8')];
    } catch {
      // Node warns about an unreadable NODE_EXTRA_CA_CERTS itself.
    }
  }
  return [...rootCertificates, ...fromFile, ...extra];
}

/** Keep-alive agents of one execution, per checked target, pinned to its checked address. */
export class UpstreamAgents {
  private readonly agents = new Map<string, HttpAgent>();
  /**
   * Built on first use, once: a `ca` option would be part of the agent's pool key, which
   * https.Agent joins from every certificate on each request.
   */
  private secureContext: SecureContext | undefined;

  constructor(private readonly extraCa: readonly string[] | undefined) {}

  private upstreamContext(): SecureContext | undefined {
    if (!this.secureContext && this.extraCa && this.extraCa.length > 0) {
      this.secureContext = createSecureContext({ ca: upstreamTrust(this.extraCa) });
    }
    return this.secureContext;
  }

  agentFor(target: CheckedTarget, tls: boolean): HttpAgent {
    const key = `${tls ? 'https' : 'http'}\0${target.host}\0${target.port}\0${target.address}`;
    let agent = this.agents.get(key);
    if (!agent) {
      const options = {
        keepAlive: true,
        lookup: pinnedLookup(target),
        highWaterMark: BODY_HIGH_WATER_MARK,
      };
      agent = tls
        ? new HttpsAgent({
            ...options,
            secureContext: this.upstreamContext(),
            ...(isIP(target.host) ? {} : { servername: target.host }),
          })
        : new HttpAgent(options);
      this.agents.set(key, agent);
    }
    return agent;
  }

  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

export interface ForwardOptions {
  target: CheckedTarget;
  tls: boolean;
  agent: HttpAgent;
  path: string;
  rawHeaders: string[];
}

/** Methods sent again when a kept-alive upstream socket turns out closed (RFC 9110 §9.2.2). */
const RETRIED_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Sends `req` upstream as `options` say and streams the answer back to `res`. */
export function forward(req: IncomingMessage, res: ServerResponse, options: ForwardOptions): void {
  const { target } = options;
  const headers = options.rawHeaders.some((h, i) => i % 2 === 0 && h.toLowerCase() === 'host')
    ? options.rawHeaders
    : ['Host', hostHeader(target, options.tls), ...options.rawHeaders];
  const bodiless =
    RETRIED_METHODS.has(req.method ?? '') &&
    !req.headers['transfer-encoding'] &&
    (req.headers['content-length'] ?? '0') === '0';
  const send = (retry: boolean) => {
    const upstream = (options.tls ? httpsRequest : httpRequest)({
      host: target.host,
      port: target.port,
      method: req.method,
      path: options.path,
      headers: headers as unknown as Record<string, string>,
      agent: options.agent,
    });
    upstream.on('response', (answer) => {
      res.writeHead(
        answer.statusCode ?? 502,
        answer.statusMessage,
        endToEndHeaders(answer.rawHeaders) as unknown as Record<string, string>,
      );
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      // The server closed a pooled connection as it was reused: nothing reached it.
      if (retry && upstream.reusedSocket && err.code === 'ECONNRESET' && !res.headersSent) {
        send(false);
        return;
      }
      refuseResponse(
        res,
        502,
        `egress error: ${target.host}:${target.port} failed: ${err.message}`,
      );
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.on('error', () => upstream.destroy());
    if (bodiless) {
      req.resume();
      upstream.end();
    } else {
      req.pipe(upstream);
    }
  };
  send(bodiless);
}

function hostHeader(target: CheckedTarget, tls: boolean): string {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return target.port === (tls ? 443 : 80) ? host : `${host}:${target.port}`;
}
