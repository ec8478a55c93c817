const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** The page a refused or failed sign-in lands on: what went wrong, and the way back. */
export function signInRefusedPage(message: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in refused · Ambient</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1b1f24}h1{font-size:1.4rem}a{color:#0b5cad}</style>
</head>
<body>
<main>
<h1>Sign-in refused</h1>
<p role="alert">${escapeHtml(message)}</p>
<p><a href="/console/">Back to the console's sign-in</a></p>
</main>
</body>
</html>
`;
}

/** Headers of that page: nothing but its own inline style may load. */
export const SIGN_IN_PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
  'Cache-Control': 'no-store',
};
