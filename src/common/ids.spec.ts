import { newSecretToken } from './ids';

describe('newSecretToken', () => {
  it('is 43 base64url characters and never starts with "-" (a CLI would read it as a flag)', () => {
    // 2,000 draws: about 31 of them would start with "-" if nothing redrew them.
    const tokens = Array.from({ length: 2000 }, () => newSecretToken());
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/);
    expect(new Set(tokens).size).toBe(tokens.length);
  });
});
