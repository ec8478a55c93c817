import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

/** The console is served by the api role at /console; every asset comes from Ambient itself. */
export default defineConfig({
  root,
  base: '/console/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic' } },
  // The live hub's SharedWorker (src/live) is a module: it shares chunks with the pages.
  worker: { format: 'es' },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // No data: URLs or inline code: the Content-Security-Policy allows only files from 'self'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: true,
  },
});
