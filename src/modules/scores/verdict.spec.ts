import { checkVerdict } from './verdict';

describe('checkVerdict', () => {
  it('accepts a score, a classification or both, with an optional reason', () => {
    expect(checkVerdict({ criterion: 'tests', score: 0.5 })).toEqual({
      verdict: { criterion: 'tests', score: 0.5, classification: null, reason: null },
    });
    expect(checkVerdict({ criterion: ' style ', classification: 'pass', reason: 'ok' })).toEqual({
      verdict: { criterion: 'style', score: null, classification: 'pass', reason: 'ok' },
    });
    expect(checkVerdict({ criterion: 'edge', score: 0, classification: 'fail' })).toHaveProperty(
      'verdict',
    );
    expect(checkVerdict({ criterion: 'edge', score: 1 })).toHaveProperty('verdict');
  });

  it.each([
    [null, 'a verdict must be a JSON object'],
    [[], 'a verdict must be a JSON object'],
    [{ score: 0.5 }, 'criterion:'],
    [{ criterion: '', score: 0.5 }, 'criterion:'],
    [{ criterion: 'x'.repeat(101), score: 0.5 }, 'criterion:'],
    [{ criterion: 'c', score: 1.5 }, 'score: must be a number from 0 to 1'],
    [{ criterion: 'c', score: -0.1 }, 'score: must be a number from 0 to 1'],
    [{ criterion: 'c', score: '0.5' }, 'score: must be a number from 0 to 1'],
    [{ criterion: 'c' }, 'score: a verdict needs a score or a classification'],
    [{ criterion: 'c', classification: '' }, 'classification:'],
    [{ criterion: 'c', score: 0.5, reason: 7 }, 'reason:'],
    [{ criterion: 'c', score: 0.5, verdict: 'x' }, 'verdict: is not a verdict field'],
  ])('rejects %j', (raw, error) => {
    const check = checkVerdict(raw);
    expect('error' in check && check.error).toContain(error);
  });
});
