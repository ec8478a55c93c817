/**
 * Cookies as one browser keeps them across Ambient and the test provider (both on 127.0.0.1, and
 * cookies do not depend on the port), by name: enough for a sign-in walked through with fetch.
 */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  /** Takes the response's Set-Cookie headers (an expired or emptied cookie is removed). */
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => {
        const [key, v] = a.trim().split('=');
        if (/^max-age$/i.test(key)) return Number(v) <= 0;
        if (/^expires$/i.test(key)) return new Date(v).getTime() <= Date.now();
        return false;
      });
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  /** fetch with these cookies, no redirect followed; keeps what the answer sets. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', this.header);
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.take(response);
    return response;
  }
}

/**
 * Walks a browser's sign-in: Ambient's login redirect, the provider's login form (filled with
 * `login`), its consent, back to Ambient's callback. Answers the callback's response (a redirect
 * into the console when signed in, a refusal page otherwise) and the jar holding the cookies.
 */
export async function signInThroughProvider(
  appOrigin: string,
  login: string,
  jar = new CookieJar(),
): Promise<{ response: Response; jar: CookieJar }> {
  let url = `${appOrigin}/api/v1/auth/oidc/login?return_to=/console/runs`;
  let init: RequestInit = {};
  for (let hop = 0; hop < 20; hop += 1) {
    const response = await jar.fetch(url, init);
    init = {};
    if (url.startsWith(`${appOrigin}/api/v1/auth/oidc/callback`)) return { response, jar };
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      url = new URL(location, url).href;
      continue;
    }
    const page = await response.text();
    const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1];
    if (response.status !== 200 || !action) {
      throw new Error(`sign-in stopped at ${url} (${response.status}): ${page.slice(0, 500)}`);
    }
    url = new URL(action, url).href;
    init = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ login }).toString(),
    };
  }
  throw new Error('sign-in took more than 20 hops');
}
