import { generateApiKey, hashApiKey, hashesEqual, lookupPrefixOf } from './api-key-format';

describe('API key format', () => {
  it('generates distinct keys that carry their lookup prefix', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key).toMatch(/^amb_[A-Za-z0-9]{12}_[A-Za-z0-9]{32}$/);
    expect(a.key).not.toBe(b.key);
    expect(lookupPrefixOf(a.key)).toBe(a.prefix);
  });

  it('derives a stable prefix for operator-chosen keys', () => {
    expect(lookupPrefixOf('my-operator-key-123')).toBe(lookupPrefixOf('my-operator-key-123'));
    expect(lookupPrefixOf('my-operator-key-123')).toMatch(/^x[0-9a-f]{15}$/);
  });

  it('compares hashes in full', () => {
    expect(hashesEqual(hashApiKey('k1'), hashApiKey('k1'))).toBe(true);
    expect(hashesEqual(hashApiKey('k1'), hashApiKey('k2'))).toBe(false);
    expect(hashesEqual(hashApiKey('k1'), Buffer.alloc(3))).toBe(false);
  });
});
