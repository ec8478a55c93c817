import type { AppConfig } from '../../config/app-config';
import { blobPath, UrlSigner } from './url-signer';

describe('UrlSigner', () => {
  const config = {
    server: { publicUrl: 'https://ambient.example.com/' },
    blobs: { signingKey: 'test-key', urlTtlSeconds: 60 },
  } as unknown as AppConfig;
  const signer = new UrlSigner(config);
  const grant = { key: 'artifacts/abc', contentType: 'text/plain', filename: 'a.txt' };
  const path = blobPath(grant.key);
  const now = Date.UTC(2026, 0, 1);

  const parts = (url: string) => {
    const q = new URL(url).searchParams;
    return { expires: q.get('expires')!, signature: q.get('signature')! };
  };

  it('signs a URL under the public API address that expires after the TTL', () => {
    const { url, expiresAt } = signer.sign(grant, now);
    expect(url).toMatch(/^https:\/\/ambient\.example\.com\/api\/v1\/blobs\/artifacts\/abc\?/);
    expect(expiresAt.getTime()).toBe(now + 60_000);
    const { expires, signature } = parts(url);
    expect(signer.refusal(path, grant, expires, signature, now + 59_000)).toBeNull();
    expect(signer.refusal(path, grant, expires, signature, now + 60_000)).toContain('expired');
  });

  it('refuses any change to the key, type, file name, expiry or signature', () => {
    const { expires, signature } = parts(signer.sign(grant, now).url);
    const mismatch = 'signature does not match';
    expect(
      signer.refusal(path, { ...grant, key: 'artifacts/abd' }, expires, signature, now),
    ).toContain(mismatch);
    expect(
      signer.refusal(path, { ...grant, contentType: 'text/html' }, expires, signature, now),
    ).toContain(mismatch);
    expect(
      signer.refusal(path, { ...grant, filename: 'b.txt' }, expires, signature, now),
    ).toContain(mismatch);
    expect(signer.refusal(path, grant, String(Number(expires) + 1), signature, now)).toContain(
      mismatch,
    );
    expect(signer.refusal(path, grant, expires, '0'.repeat(64), now)).toContain(mismatch);
    expect(signer.refusal(path, grant, expires, 'xyz', now)).toContain('malformed');
    expect(signer.refusal(path, grant, 'soon', signature, now)).toContain('malformed');
  });

  it('binds a signature to the route it was minted for', () => {
    const attachment = { key: 'run-attachments/att1', contentType: 'text/plain', filename: 'a' };
    const minted = signer.signAt('run-attachments/att1', attachment, now);
    expect(minted.url).toMatch(/\/api\/v1\/run-attachments\/att1\?/);
    const { expires, signature } = parts(minted.url);
    expect(signer.refusal('run-attachments/att1', attachment, expires, signature, now)).toBeNull();
    // The same key and query on /blobs (where a blob could have that key): refused.
    expect(signer.refusal(blobPath(attachment.key), attachment, expires, signature, now)).toContain(
      'does not match',
    );
  });

  it('does not accept a URL signed with another key', () => {
    const other = new UrlSigner({ ...config, blobs: { ...config.blobs, signingKey: 'other' } });
    const { expires, signature } = parts(other.sign(grant, now).url);
    expect(signer.refusal(path, grant, expires, signature, now)).toContain('does not match');
  });
});
