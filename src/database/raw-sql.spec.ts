import { statementOf, valueBytes } from './raw-sql';

describe('statementOf', () => {
  it("bounds a multi-row INSERT's size by every value of every row, as a packet is split by it", () => {
    const rows = [
      ['a'.repeat(1000), 7],
      ['b'.repeat(500), Buffer.alloc(100)],
    ];
    const sql = 'INSERT INTO t (a, b) VALUES ?';
    expect(statementOf(sql, [rows]).bytes).toBe(sql.length + 1000 * 3 + 16 + 500 * 3 + 100 * 2);
    // An IN (?) list the same way, and scalars as before.
    expect(valueBytes(['ab', 'c'])).toBe(9);
    expect(statementOf('COMMIT').bytes).toBe('COMMIT'.length);
  });
});
