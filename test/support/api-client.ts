import request from 'supertest';

/** supertest bound to an Ambient API base URL with a key. */
export function apiClient(baseUrl: string, apiKey: string) {
  const url = new URL(baseUrl);
  const origin = url.origin;
  const prefix = url.pathname.replace(/\/+$/, '');
  const auth = { Authorization: `Bearer ${apiKey}` };
  return {
    get: (path: string) => request(origin).get(`${prefix}${path}`).set(auth),
    post: (path: string, body?: unknown) =>
      body === undefined
        ? request(origin).post(`${prefix}${path}`).set(auth)
        : request(origin)
            .post(`${prefix}${path}`)
            .set(auth)
            .send(body as object),
    put: (path: string, body: unknown) =>
      request(origin)
        .put(`${prefix}${path}`)
        .set(auth)
        .send(body as object),
    patch: (path: string, body: unknown) =>
      request(origin)
        .patch(`${prefix}${path}`)
        .set(auth)
        .send(body as object),
    delete: (path: string) => request(origin).delete(`${prefix}${path}`).set(auth),
    raw: () => request(origin),
    prefix,
    runState: async (runId: string): Promise<string> =>
      (await request(origin).get(`${prefix}/agent/runs/${runId}`).set(auth)).body.state,
    /**
     * A signed download URL fetched without a key, its body as text. The URL names the public
     * URL; only its path and query are sent to this app.
     */
    download: (location: string) => signedDownload(origin, location),
    /** A run's raw transcript, fetched the way clients do: the 302, then its signed URL. */
    transcriptText: async (runId: string): Promise<string> => {
      const redirect = await request(origin)
        .get(`${prefix}/agent/runs/${runId}/transcript`)
        .set(auth)
        .redirects(0);
      if (redirect.status !== 302) throw new Error(`transcript: HTTP ${redirect.status}`);
      return (await signedDownload(origin, redirect.headers.location)).body as string;
    },
  };
}

function signedDownload(origin: string, location: string) {
  const url = new URL(location);
  return request(origin)
    .get(`${url.pathname}${url.search}`)
    .buffer(true)
    .parse((res, done) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () => done(null, text));
    });
}
