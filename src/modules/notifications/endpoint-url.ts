import { EgressGuard, EgressRefusedError } from '../../common/egress/egress-guard';
import { parseIp } from '../../common/egress/ip-address';

/**
 * Why `text` cannot be a notification endpoint's URL, or null: https, or http to a host that
 * AMBIENT_EGRESS_ALLOW lists; no credentials in the URL; the host must pass the egress guard
 * (checked again before every attempt, whose connection then uses the checked address).
 */
export async function endpointUrlProblem(guard: EgressGuard, text: string): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.username || url.password) return 'must not contain credentials';
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  try {
    const target = await guard.check(url.hostname, port);
    const address = parseIp(target.address);
    if (
      url.protocol === 'http:' &&
      !(address && guard.allowList.allows(target.host, address, port))
    ) {
      return 'must be an https URL (http only for hosts AMBIENT_EGRESS_ALLOW lists)';
    }
  } catch (err) {
    if (err instanceof EgressRefusedError) return err.message;
    throw err;
  }
  return null;
}
