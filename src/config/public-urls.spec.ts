import { loadConfig } from './app-config';
import { listenerPublicUrl, settlePublicUrls } from './public-urls';

const config = (env: Record<string, string> = {}) =>
  loadConfig({ AMBIENT_CONFIG_FILE: 'config/default.yaml', ...env });

describe('public URLs', () => {
  it('follow AMBIENT_PORT and AMBIENT_INGRESS_PORT when none is configured', () => {
    const loaded = config({ AMBIENT_PORT: '9300', AMBIENT_INGRESS_PORT: '9301' });
    expect(loaded.server.publicUrl).toBe('http://localhost:9300');
    expect(loaded.webhooks.baseUrl).toBe('http://localhost:9301');
    expect(settlePublicUrls(loaded, { api: 9300, ingress: 9301 })).toEqual([]);
  });

  it('take the bound port of a listener started on port 0', () => {
    const loaded = config({ AMBIENT_PORT: '0', AMBIENT_HOST: '127.0.0.1' });
    settlePublicUrls(loaded, { api: 41234 });
    expect(loaded.server.publicUrl).toBe('http://127.0.0.1:41234');
    expect(loaded.webhooks.baseUrl).toBe('http://localhost:8081');
  });

  it('keep configured URLs, warning only when one names this machine on another port', () => {
    const stale = config({
      AMBIENT_PORT: '9300',
      AMBIENT_PUBLIC_URL: 'http://localhost:8080',
      AMBIENT_WEBHOOK_BASE_URL: 'http://127.0.0.1:8081/',
      AMBIENT_INGRESS_PORT: '9301',
    });
    const warnings = settlePublicUrls(stale, { api: 9300, ingress: 9301 });
    expect(stale.server.publicUrl).toBe('http://localhost:8080');
    expect(warnings).toEqual([
      expect.stringMatching(
        /^AMBIENT_PUBLIC_URL http:\/\/localhost:8080 points at port 8080 .*port 9300\)$/,
      ),
      expect.stringMatching(/^AMBIENT_WEBHOOK_BASE_URL .* points at port 8081 .*port 9301\)$/),
    ]);
    const proxied = config({
      AMBIENT_PUBLIC_URL: 'https://ambient.example.com',
      AMBIENT_WEBHOOK_BASE_URL: 'http://localhost:9301',
    });
    expect(settlePublicUrls(proxied, { api: 8080, ingress: 9301 })).toEqual([]);
  });

  it('write wildcard and IPv6 binds as a browser would', () => {
    expect(listenerPublicUrl('0.0.0.0', 80)).toBe('http://localhost:80');
    expect(listenerPublicUrl('::1', 8080)).toBe('http://[::1]:8080');
    expect(listenerPublicUrl('10.0.0.5', 8080)).toBe('http://10.0.0.5:8080');
  });
});
