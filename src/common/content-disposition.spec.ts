import { attachmentDisposition } from './content-disposition';

describe('attachmentDisposition', () => {
  it('keeps a plain ASCII name as it was', () => {
    expect(attachmentDisposition('notes.txt')).toBe('attachment; filename="notes.txt"');
  });

  it('adds the exact UTF-8 name beside an ASCII fallback for any other script', () => {
    expect(attachmentDisposition('报告.txt')).toBe(
      `attachment; filename="__.txt"; filename*=UTF-8''%E6%8A%A5%E5%91%8A.txt`,
    );
    expect(attachmentDisposition('résumé (1).pdf')).toBe(
      `attachment; filename="resume (1).pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%281%29.pdf`,
    );
  });

  it('never lets a quote, backslash or line break shape the header', () => {
    const header = attachmentDisposition('a"b\\c\r\nSet-Cookie: x.txt');
    expect(header).toMatch(/^attachment; filename="a_b_cSet-Cookie: x\.txt"; filename\*=/);
    expect(header).not.toMatch(/[\r\n]/);
    expect(decodeURIComponent(header.split("UTF-8''")[1])).toBe('a"b\\cSet-Cookie: x.txt');
  });

  it('always produces a value Node accepts as a header', () => {
    for (const name of ['', '\u0000', '\ud800.txt', '🎉.md', 'x'.repeat(300)]) {
      const header = attachmentDisposition(name);
      expect(header).toMatch(/^[\x20-\x7e]+$/);
    }
    expect(attachmentDisposition('')).toBe('attachment; filename="download"');
  });
});
