import { jsonColumn } from './json-column';

describe('jsonColumn', () => {
  it('parses the text MariaDB returns', () => {
    expect(jsonColumn<{ a: number }>('{"a":1}')).toEqual({ a: 1 });
  });

  it('keeps the value MySQL returns', () => {
    const value = { a: [1, 2] };
    expect(jsonColumn(value)).toBe(value);
  });

  it('reads SQL NULL (and a missing column) as null', () => {
    expect(jsonColumn(null)).toBeNull();
    expect(jsonColumn(undefined)).toBeNull();
  });
});
