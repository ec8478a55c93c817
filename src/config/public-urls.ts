import type { AppConfig } from './app-config.types';
import { oidcCallbackUrl } from './sign-in-settings';

/**
 * The links the API returns (session_link, trigger_url, signed downloads, Swagger's server, the
 * run page redirect) start with AMBIENT_PUBLIC_URL, and webhook URLs with AMBIENT_WEBHOOK_BASE_URL.
 * Unset, each is the address of the listener that answers them, so changing AMBIENT_PORT or
 * AMBIENT_INGRESS_PORT alone never leaves links pointing at the old ports.
 */

const WILDCARDS = new Set(['0.0.0.0', '::', '']);
const LOOPBACK_NAMES = new Set(['localhost', '0.0.0.0', '[::]', '[::1]']);

/** `http://host:port` as a browser on this machine writes it (localhost for a wildcard bind). */
export function listenerPublicUrl(host: string, port: number): string {
  const name = WILDCARDS.has(host) ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/** Fills in the public URLs the configuration leaves unset (called by loadConfig). */
export function defaultPublicUrls(config: AppConfig): void {
  if (!config.server.publicUrl) {
    config.server.publicUrl = listenerPublicUrl(config.server.host, config.server.port);
    config.server.publicUrlFollowsListener = true;
  }
  if (!config.webhooks.baseUrl) {
    config.webhooks.baseUrl = listenerPublicUrl(config.ingress.host, config.ingress.port);
    config.webhooks.baseUrlFollowsListener = true;
  }
}

export interface BoundPorts {
  /** The API listener's port, when this process serves the api role. */
  api?: number;
  /** The ingress listener's port, when this process serves the ingress role. */
  ingress?: number;
}

/**
 * Once listening, unset public URLs take the bound ports (they differ from the configured ones
 * only with port 0, a free port the system picks), and a configured URL naming this machine on
 * another port than its listener gets a warning: its links lead nowhere or to another server.
 */
export function settlePublicUrls(config: AppConfig, bound: BoundPorts): string[] {
  const warnings: string[] = [];
  if (bound.api !== undefined) {
    if (config.server.publicUrlFollowsListener) {
      const before = config.server.publicUrl;
      config.server.publicUrl = listenerPublicUrl(config.server.host, bound.api);
      // A callback derived from the listener's address follows it to the bound port too.
      if (config.signIn?.oidcRedirectUrl === oidcCallbackUrl(before)) {
        config.signIn.oidcRedirectUrl = oidcCallbackUrl(config.server.publicUrl);
      }
    } else {
      const warning = disagreement('AMBIENT_PUBLIC_URL', config.server.publicUrl, bound.api);
      if (warning) warnings.push(`${warning} (the API listens on port ${bound.api})`);
    }
  }
  if (bound.ingress !== undefined) {
    if (config.webhooks.baseUrlFollowsListener) {
      config.webhooks.baseUrl = listenerPublicUrl(config.ingress.host, bound.ingress);
    } else {
      const warning = disagreement(
        'AMBIENT_WEBHOOK_BASE_URL',
        config.webhooks.baseUrl,
        bound.ingress,
      );
      if (warning) warnings.push(`${warning} (the ingress listens on port ${bound.ingress})`);
    }
  }
  return warnings;
}

/** A URL of this machine (loopback) whose port is not `port`; other hosts may be proxies. */
function disagreement(name: string, url: string, port: number): string | null {
  const parsed = new URL(url);
  const host = parsed.hostname.toLowerCase();
  const local = LOOPBACK_NAMES.has(host) || host.endsWith('.localhost') || /^127\./.test(host);
  const urlPort = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
  if (!local || urlPort === port) return null;
  return `${name} ${url} points at port ${urlPort} of this machine: links in API answers lead there; unset it to follow the listener, or set it to the address clients use`;
}
