const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `Content-Disposition: attachment` for a file name of any script (RFC 6266): a quoted ASCII
 * `filename` every client understands, and, when that had to change the name, the exact name as
 * `filename*=UTF-8''…` (RFC 8187), which current clients prefer. Header values must be Latin-1
 * without control characters, so a raw non-ASCII name would make Node refuse the whole answer.
 */
export function attachmentDisposition(filename: string): string {
  const name =
    filename.replace(LONE_SURROGATE, '\ufffd').replace(/[\u0000-\u001f\u007f-\u009f]/g, '') ||
    'download';
  const fallback = asciiFallback(name);
  const header = `attachment; filename="${fallback}"`;
  return fallback === name ? header : `${header}; filename*=UTF-8''${percentEncode(name)}`;
}

/** Accents dropped (é → e), anything else outside printable ASCII, `"` and `\` become `_`. */
function asciiFallback(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|["\\]/g, '_');
}

/** RFC 8187 `value-chars`: UTF-8 bytes, percent-encoded outside `attr-char`. */
function percentEncode(name: string): string {
  return encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}
