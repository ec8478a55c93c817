import { rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  connect as netConnect,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import type { Duplex } from 'node:stream';
import { TLSSocket, type TLSSocketOptions } from 'node:tls';
import {
  EgressRefusedError,
  type CheckedTarget,
  type EgressGuard,
} from '../../../../common/egress/egress-guard';
import type {
  BoundSecret,
  EgressDecision,
  EgressPolicy,
} from '../../../../common/egress/egress-policy';
import {
  needsInterception,
  normalizeHost,
  secretHosts,
  secretsFor,
} from '../../../../common/egress/egress-rules';
import { DecisionTally, hostPort, policyVerdict } from './egress-decisions';
import { ExecutionCa } from './execution-ca';
import { refuseResponse, refuseSocket } from './proxy-responses';
import { basicFromUserinfo, injectIntoHeaders } from './secret-injection';
import { BODY_HIGH_WATER_MARK, endToEndHeaders, forward, UpstreamAgents } from './upstream';
import { listenOnSocketPath } from '../fresh-paths';

/** Request heads larger than this get 431 (git and package managers stay far below). */
const MAX_HEADER_BYTES = 32 * 1024;
const HEADERS_TIMEOUT_MS = 60_000;
const INTERCEPTED_KEEP_ALIVE_MS = 30_000;
export const DEFAULT_MAX_CONNECTIONS = 512;

export interface EgressProxyOptions {
  policy: EgressPolicy;
  guard: EgressGuard;
  /** Called for every decision, allowed or denied (a throwing callback is ignored). */
  onDecision?: (decision: EgressDecision) => void;
  /** Extra trust for upstream TLS (tests); by default Node's own, NODE_EXTRA_CA_CERTS included. */
  upstreamCa?: string[];
  /** Client connections open at once; more are answered 503 (the proxy shares the host's descriptors). */
  maxConnections?: number;
}

/** An intercepted tunnel: where its requests go, and which secrets they may carry. */
interface Interception {
  target: CheckedTarget;
  secrets: BoundSecret[];
}

/**
 * One execution's egress proxy (an HTTP proxy on a Unix socket): decides each CONNECT and
 * absolute-form request by the policy, then by the EgressGuard, and connects to the address
 * the guard checked. Hosts a bound secret goes to, or whose rules limit methods, are
 * intercepted with a leaf of the execution's CA so that the methods can be checked and the
 * secrets' placeholders replaced; every other host is a plain tunnel.
 */
export class EgressProxy {
  private readonly sockets = new Set<Duplex>();
  private clients = 0;
  private readonly listeners: { server: NetServer; path: string }[] = [];
  private readonly tally = new DecisionTally();
  private readonly agents: UpstreamAgents;
  private readonly outer: Server;
  private readonly inner: Server;
  private readonly interceptions = new WeakMap<Duplex, Interception>();
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly options: EgressProxyOptions,
    private readonly ca: ExecutionCa,
  ) {
    this.agents = new UpstreamAgents(options.upstreamCa);
    this.outer = httpServer();
    this.outer.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.onConnect(req, socket, head).catch(() => socket.destroy());
    });
    this.outer.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.onPlainRequest(req, res).catch(() => res.destroy());
    });
    this.inner = httpServer();
    // An idle intercepted connection stays open as long as a client's pool usually keeps it,
    // sparing a TLS handshake for the next request.
    this.inner.keepAliveTimeout = INTERCEPTED_KEEP_ALIVE_MS;
    this.inner.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.onInterceptedRequest(req, res);
    });
  }

  /** Throws EgressRuleError when a bound secret's hosts are not host patterns. */
  static async start(options: EgressProxyOptions): Promise<EgressProxy> {
    for (const secret of options.policy.secrets) secretHosts(secret);
    return new EgressProxy(options, await ExecutionCa.create());
  }

  /** The execution CA's certificate, for the sandbox's trust stores; nothing secret. */
  get caCertPem(): string {
    return this.ca.certPem;
  }

  /** Serves the proxy on a Unix socket at `socketPath` (a stale socket there is replaced). */
  async listen(socketPath: string): Promise<void> {
    if (this.closing) throw new Error('the egress proxy is closed');
    const server = createNetServer((socket) => this.handle(socket));
    server.on('error', () => undefined);
    await listenOnSocketPath(server, socketPath);
    this.listeners.push({ server, path: socketPath });
  }

  /** Serves one connection accepted elsewhere. */
  handle(socket: Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    this.track(socket);
    if (this.clients >= (this.options.maxConnections ?? DEFAULT_MAX_CONNECTIONS)) {
      socket.on('error', () => socket.destroy());
      refuseSocket(socket, 503, 'egress error: too many connections open through this proxy');
      return;
    }
    this.clients++;
    socket.once('close', () => this.clients--);
    this.outer.emit('connection', socket);
  }

  stats(): ReturnType<DecisionTally['snapshot']> {
    return this.tally.snapshot();
  }

  /** Ends every tunnel and connection, stops listening and forgets the CA's keys. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    this.agents.destroy();
    this.ca.close();
    await Promise.all(
      this.listeners.map(async ({ server, path }) => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await rm(path, { force: true });
      }),
    );
  }

  private async onConnect(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const authority = parseAuthority(req.url ?? '');
    if (!authority) {
      refuseSocket(client, 400, `egress error: CONNECT needs host:port, not "${req.url}"`);
      return;
    }
    const { host, port } = authority;
    const target = await this.decide(host, port, null);
    if (typeof target === 'string') {
      refuseSocket(client, 403, target);
      return;
    }
    if (client.destroyed || this.closing) return;
    const { policy } = this.options;
    const rules = policy.mode === 'allowlist' ? policy.rules : [];
    if (needsInterception(rules, policy.secrets, host, port)) {
      await this.intercept(client, head, target);
    } else {
      this.record(target.host, port, null, true, this.allowedReason(host, port));
      this.tunnel(client, head, target);
    }
  }

  /**
   * The policy's and the guard's verdict: the checked target, or the refusal's message (the
   * decision recorded). An allowed tunnel is recorded by the caller, which knows whether the
   * proxy will see its methods.
   */
  private async decide(
    host: string,
    port: number,
    method: string | null,
  ): Promise<CheckedTarget | string> {
    const name = normalizeHost(host);
    const verdict = policyVerdict(this.options.policy, name, port, method);
    if (!verdict.allowed) {
      this.record(name, port, method, false, verdict.reason, verdict.unlisted);
      return verdict.reason;
    }
    try {
      return await this.options.guard.check(name, port);
    } catch (err) {
      const reason =
        err instanceof EgressRefusedError ? err.message : `egress refused: ${String(err)}`;
      this.record(name, port, method, false, reason);
      return reason;
    }
  }

  private allowedReason(host: string, port: number): string {
    return policyVerdict(this.options.policy, normalizeHost(host), port, null).reason;
  }

  private tunnel(client: Duplex, head: Buffer, target: CheckedTarget): void {
    const upstream = netConnect({ host: target.address, port: target.port });
    this.track(upstream);
    upstream.setNoDelay(true);
    upstream.on('error', () => {
      if (!client.destroyed) {
        refuseSocket(
          client,
          502,
          `egress error: cannot connect to ${hostPort(target.host, target.port)}`,
        );
      }
    });
    client.on('close', () => upstream.destroy());
    // A clean end was piped on (client.end), and what is still buffered for the client must
    // reach it; an abrupt close ends the client at once.
    upstream.on('close', () => {
      if (!client.writableEnded) client.destroy();
    });
    upstream.once('connect', () => {
      upstream.removeAllListeners('error');
      upstream.on('error', () => client.destroy());
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  private async intercept(client: Duplex, head: Buffer, target: CheckedTarget): Promise<void> {
    let context;
    try {
      ({ context } = await this.ca.leafFor(target.host));
    } catch (err) {
      refuseSocket(client, 502, `egress error: no certificate for ${target.host}: ${String(err)}`);
      return;
    }
    if (client.destroyed || this.closing) return;
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) client.unshift(head);
    // TLSSocket passes highWaterMark on to net.Socket; Node's typings do not list it.
    const options: TLSSocketOptions & { highWaterMark: number } = {
      isServer: true,
      secureContext: context,
      ALPNProtocols: ['http/1.1'],
      highWaterMark: BODY_HIGH_WATER_MARK,
    };
    const tls = new TLSSocket(client as Socket, options);
    this.track(tls);
    tls.on('error', () => {
      tls.destroy();
      client.destroy();
    });
    this.interceptions.set(tls, {
      target,
      secrets: secretsFor(this.options.policy.secrets, target.host, target.port),
    });
    this.inner.emit('connection', tls);
  }

  private onInterceptedRequest(req: IncomingMessage, res: ServerResponse): void {
    const interception = this.interceptions.get(req.socket);
    if (!interception) {
      refuseResponse(res, 400, 'egress error: the tunnel is gone');
      return;
    }
    const { target, secrets } = interception;
    const method = (req.method ?? 'GET').toUpperCase();
    const misdirected = misdirection(req, target);
    if (misdirected) {
      this.record(target.host, target.port, method, false, misdirected);
      refuseResponse(res, 403, misdirected);
      return;
    }
    const verdict = policyVerdict(this.options.policy, target.host, target.port, method);
    this.record(target.host, target.port, method, verdict.allowed, verdict.reason);
    if (!verdict.allowed) {
      refuseResponse(res, 403, verdict.reason);
      return;
    }
    forward(req, res, {
      target,
      tls: true,
      agent: this.agents.agentFor(target, true),
      path: req.url ?? '/',
      rawHeaders: injectIntoHeaders(endToEndHeaders(req.rawHeaders), secrets),
    });
  }

  private async onPlainRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Error(url.protocol);
    } catch {
      refuseResponse(
        res,
        400,
        'egress error: this is an HTTP proxy; send CONNECT host:port or an absolute http:// URL',
      );
      return;
    }
    const port = Number(url.port) || 80;
    const method = (req.method ?? 'GET').toUpperCase();
    const target = await this.decide(url.hostname, port, method);
    if (typeof target === 'string') {
      refuseResponse(res, 403, target);
      return;
    }
    this.record(target.host, port, method, true, this.verdictReason(target, method));
    const secrets = secretsFor(this.options.policy.secrets, target.host, port);
    // The origin gets the URL's host, whatever Host header the client wrote.
    const withoutHost = endToEndHeaders(req.rawHeaders).filter(
      (_, i, all) => all[i - (i % 2)].toLowerCase() !== 'host',
    );
    let rawHeaders = injectIntoHeaders(withoutHost, secrets);
    const userinfo = basicFromUserinfo(url, secrets);
    if (userinfo && !rawHeaders.some((h, i) => i % 2 === 0 && /^authorization$/i.test(h))) {
      rawHeaders = [...rawHeaders, 'Authorization', userinfo];
    }
    forward(req, res, {
      target,
      tls: false,
      agent: this.agents.agentFor(target, false),
      path: `${url.pathname}${url.search}`,
      rawHeaders,
    });
  }

  private verdictReason(target: CheckedTarget, method: string): string {
    return policyVerdict(this.options.policy, target.host, target.port, method).reason;
  }

  private record(
    host: string,
    port: number,
    method: string | null,
    allowed: boolean,
    reason: string,
    unlisted?: true,
  ): void {
    const decision: EgressDecision = {
      host,
      port,
      method,
      allowed,
      reason,
      ...(unlisted ? { unlisted } : {}),
    };
    this.tally.add(decision);
    try {
      this.options.onDecision?.(decision);
    } catch {
      // A listener's failure must not break the connection it was told about.
    }
  }

  private track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }
}

/**
 * Why a request inside an intercepted tunnel names another origin than the tunnel's (an
 * absolute URL, a Host header of another name), or null: the secrets bound to the tunnel's
 * host must not ride along to a name the policy did not check (domain fronting).
 */
function misdirection(req: IncomingMessage, target: CheckedTarget): string | null {
  const where = hostPort(target.host, target.port);
  if (!req.url?.startsWith('/') && req.url !== '*') {
    return `egress refused: a request in the tunnel to ${where} must use a path, not "${req.url}"`;
  }
  const host = req.headers.host;
  if (host === undefined) return null;
  const name = normalizeHost(host.replace(/:\d*$/, ''));
  if (name === target.host) return null;
  return `egress refused: the tunnel goes to ${where}, its requests cannot name Host "${host}"`;
}

function httpServer(): Server {
  const server = createServer({
    maxHeaderSize: MAX_HEADER_BYTES,
    requestTimeout: 0,
    highWaterMark: BODY_HIGH_WATER_MARK,
  });
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      refuseSocket(socket, 431, 'egress error: the request head is too large');
    } else if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
    } else {
      refuseSocket(socket, 400, 'egress error: not an HTTP proxy request');
    }
  });
  return server;
}

/** `host:port` of a CONNECT (IPv6 in brackets); null when it is not one. */
function parseAuthority(text: string): { host: string; port: number } | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]/@]+):(\d{1,5})$/.exec(text);
  if (!match) return null;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return null;
  return { host: normalizeHost(match[1]), port };
}
