import { existsSync, statSync } from 'node:fs';
import { extname, join, relative as relativePath, resolve, sep } from 'node:path';
import type { NextFunction, Request, Response } from 'express';

export const CONSOLE_PATH = '/console';

/** Only this origin's scripts, styles, images and API: no inline code, no CDN. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function notBuilt(res: Response, dir: string): void {
  res.status(503).setHeader('Cache-Control', 'no-store');
  const message = `The web console is not built (no ${join(dir, 'index.html')}): run \`npm run build\`.`;
  res.json({
    type: 'about:blank',
    title: 'Console not built',
    status: 503,
    detail: message,
    error: message,
  });
}

/**
 * Express middleware serving the built single-page console at /console: files from `dir`
 * (Vite's hashed `assets/` cached for a year, everything else revalidated), and index.html for
 * any other path below /console so deep links (/console/runs/<id>) load the app.
 */
export function consoleAssets(dir: string) {
  const root = resolve(dir);
  return (req: Request, res: Response, next: NextFunction): void => {
    const path = req.path;
    if (path !== CONSOLE_PATH && !path.startsWith(`${CONSOLE_PATH}/`)) return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    if (path === CONSOLE_PATH) {
      const query = req.originalUrl.indexOf('?');
      return res.redirect(301, `${CONSOLE_PATH}/${query >= 0 ? req.originalUrl.slice(query) : ''}`);
    }
    const index = join(root, 'index.html');
    if (!existsSync(index)) return notBuilt(res, root);
    let relative: string;
    try {
      relative = decodeURIComponent(path.slice(CONSOLE_PATH.length + 1));
    } catch {
      relative = '';
    }
    const file = resolve(root, relative);
    const inside = file.startsWith(root + sep);
    if (inside && relative && isFile(file)) {
      res.setHeader('Cache-Control', relative.startsWith('assets/') ? IMMUTABLE : REVALIDATE);
      // Sent from `root`: only the part below it is checked for dot segments, so a console installed
      // under a dotted directory (~/.local/…) is served, and a dotfile inside it is not.
      return res.sendFile(relativePath(root, file), {
        root,
        dotfiles: 'deny',
        cacheControl: false,
      });
    }
    // A missing script or style is a 404, not the app's HTML under a .js name.
    if (relative.startsWith('assets/') || (extname(relative) && extname(relative) !== '.html')) {
      res.status(404).setHeader('Cache-Control', 'no-store');
      res.json({ type: 'about:blank', title: 'Not Found', status: 404, error: 'Not Found' });
      return;
    }
    res.setHeader('Cache-Control', REVALIDATE);
    res.sendFile('index.html', { root, cacheControl: false });
  };
}
