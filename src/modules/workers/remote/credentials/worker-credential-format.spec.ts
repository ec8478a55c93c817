import {
  credentialPrefixOf,
  generateWorkerCredential,
  hashCredential,
  hashesEqual,
  isWorkerCredential,
  scopeCovers,
  workerScopeProblem,
} from './worker-credential-format';

describe('worker credential format', () => {
  it('generates ambw_ credentials whose lookup prefix is readable back', () => {
    const { credential, prefix } = generateWorkerCredential();
    expect(credential).toMatch(/^ambw_[A-Za-z0-9]{12}_[A-Za-z0-9]{32}$/);
    expect(isWorkerCredential(credential)).toBe(true);
    expect(credentialPrefixOf(credential)).toBe(prefix);
    expect(credentialPrefixOf('amb_abcdefghijkl_' + 'x'.repeat(32))).toBeNull();
    expect(hashesEqual(hashCredential(credential), hashCredential(credential))).toBe(true);
    expect(hashesEqual(hashCredential(credential), hashCredential(`${credential}x`))).toBe(false);
  });

  it('covers one worker id exactly, or the ids of a pool prefix', () => {
    expect(scopeCovers('box-1', 'box-1')).toBe(true);
    expect(scopeCovers('box-1', 'box-10')).toBe(false);
    expect(scopeCovers('box-1', 'Box-1')).toBe(false);
    expect(scopeCovers('ci-*', 'ci-7')).toBe(true);
    expect(scopeCovers('ci-*', 'prod-1')).toBe(false);
  });

  it('refuses scopes no worker id could match, naming why', () => {
    expect(workerScopeProblem('ci-*')).toBeNull();
    expect(workerScopeProblem('box-1')).toBeNull();
    expect(workerScopeProblem('*')).toMatch(/^a pool needs a prefix/);
    expect(workerScopeProblem('warp-*')).toMatch(/reserved/);
    expect(workerScopeProblem('a b')).toMatch(/printable ASCII/);
  });
});
