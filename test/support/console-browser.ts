import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import puppeteer, { type Browser, type ElementHandle, type Page } from 'puppeteer-core';
import { REPO_ROOT } from './test-app';

/** The little of the DOM that the functions below, which run in Chromium, use. */
interface BrowserElement {
  innerText: string;
  textContent: string | null;
  tagName: string;
  disabled?: boolean;
  htmlFor?: string;
  value?: string;
}
declare const document: {
  body: { innerText: string };
  querySelector(selector: string): BrowserElement | null;
  querySelectorAll(selector: string): Iterable<BrowserElement>;
};

/** Debian's chromium (browser downloads are not reachable); AMBIENT_CHROMIUM overrides it. */
export const CHROMIUM = process.env.AMBIENT_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots of failed browser steps (git-ignored). */
export const FAILURE_SHOTS = join(REPO_ROOT, 'test-results', 'console');

/** How old another build must be before a new one removes it. */
const STALE_BUILD_MS = 2 * 60 * 60 * 1000;

/**
 * Builds the console (Vite takes a second or two), so the test serves the current console/ source
 * and never a stale or missing dist/ (`npm test` runs without a build). One build per state of
 * the source, kept under test-results/console-build (git-ignored; no dot in the path, which the
 * console's file server refuses) and shared by every suite that asks: a build goes to
 * a directory of its own first and is renamed into place, so suites building at once never see
 * half of one.
 */
export function buildConsole(): string {
  const cache = join(REPO_ROOT, 'test-results', 'console-build');
  const built = join(cache, consoleSourceHash());
  if (existsSync(join(built, 'index.html'))) return built;
  mkdirSync(cache, { recursive: true });
  const outDir = mkdtempSync(join(cache, 'building-'));
  const vite = join(REPO_ROOT, 'node_modules', '.bin', 'vite');
  const result = spawnSync(
    vite,
    ['build', '--config', 'console/vite.config.mts', '--outDir', outDir, '--logLevel', 'error'],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true' },
    },
  );
  if (result.status !== 0 || !existsSync(join(outDir, 'index.html'))) {
    rmSync(outDir, { recursive: true, force: true });
    throw new Error(`vite build failed (${result.status}): ${result.stderr}${result.stdout}`);
  }
  try {
    renameSync(outDir, built);
  } catch {
    if (existsSync(join(built, 'index.html'))) {
      // Another suite's build of the same source got there first: the same files.
      rmSync(outDir, { recursive: true, force: true });
    } else {
      // What an interrupted clean-up left of an earlier build: replaced.
      rmSync(built, { recursive: true, force: true });
      renameSync(outDir, built);
    }
  }
  // Builds of other states of the source, and builds a killed run left half-made: once old
  // enough that no run still serves them (a run that saw the source change keeps both meanwhile).
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    const age = Date.now() - (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (path !== built && age > STALE_BUILD_MS) {
      rmSync(path, { recursive: true, force: true });
    }
  }
  return built;
}

/** What a console build is made of: every file of console/ (but its output) and src/, and the lockfile. */
function consoleSourceHash(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      // Not the output, nor editors' lock and backup files (a dangling symlink, often).
      if (['dist', 'node_modules'].includes(entry.name) || /^[.#]/.test(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) {
        let content: Buffer;
        try {
          content = readFileSync(path);
        } catch {
          continue; // deleted while walking
        }
        hash.update(path.slice(REPO_ROOT.length)).update('\0').update(content);
      }
    }
  };
  walk(join(REPO_ROOT, 'console'));
  walk(join(REPO_ROOT, 'src')); // the console imports some of it (roles, run states, cron)
  hash.update(readFileSync(join(REPO_ROOT, 'package-lock.json')));
  return hash.digest('hex').slice(0, 16);
}

/**
 * A free local port, so the app can listen where its public URL says: downloads follow the API's
 * redirects to signed URLs under AMBIENT_PUBLIC_URL, which the console's CSP allows only from
 * its own origin.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: apt-get install chromium, or set AMBIENT_CHROMIUM`,
    );
  }
  const root = process.getuid?.() === 0;
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Chromium refuses to start its sandbox as root.
    args: [...(root ? ['--no-sandbox'] : []), '--disable-dev-shm-usage', '--no-first-run'],
    defaultViewport: { width: 1280, height: 900 },
  });
}

/**
 * One Chromium for the calling describe block and a fresh page for each test (registers the jest
 * hooks); `page` stands for the current test's page.
 */
export function useChromium(): { readonly page: Page } {
  let browser: Browser | undefined;
  let current: Page | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());
  beforeEach(async () => {
    if (!browser) throw new Error('Chromium did not start');
    current = await browser.newPage();
  });
  afterEach(() => current?.close());
  return {
    get page(): Page {
      if (!current) throw new Error('no page outside a test');
      return current;
    },
  };
}

/** Runs one browser step; on failure saves a screenshot named after it, then fails. */
export async function step<T>(page: Page, name: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    mkdirSync(FAILURE_SHOTS, { recursive: true });
    const file = join(FAILURE_SHOTS, `${name.replace(/[^A-Za-z0-9]+/g, '-')}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    if (error instanceof Error) error.message += `\n(screenshot: ${file})`;
    throw error;
  }
}

/** Clicks the button or link whose visible text is exactly `text`. */
export async function clickText(page: Page, text: string, selector = 'button, a'): Promise<void> {
  const handle = await page.waitForFunction(
    (sel, label) =>
      [...document.querySelectorAll(sel)].find(
        (el) => el.innerText.trim() === label && !el.disabled,
      ),
    {},
    selector,
    text,
  );
  await (handle.asElement() as ElementHandle).click();
}

/**
 * Opens a section of the console from its header, as a person would: on a narrow screen the
 * sections are behind the Menu button, which is opened first.
 */
export async function openSection(page: Page, label: string): Promise<void> {
  const toggle = await page.waitForSelector('button.menu-toggle');
  if (!toggle) throw new Error('the console has no header');
  const collapsed =
    (await toggle.isVisible()) &&
    (await toggle.evaluate((b) => b.getAttribute('aria-expanded'))) !== 'true';
  if (collapsed) await toggle.click();
  await clickText(page, label, 'nav a');
}

/**
 * Waits until the run page shows the run in `state` (its badge carries the code in data-state).
 * Checks on each DOM change rather than each animation frame: a tab behind another is hidden, and
 * a hidden tab draws no frames, so a frame-polled wait there never sees a change made after it began.
 */
export async function waitForRunState(page: Page, state: string, timeout = 30_000): Promise<void> {
  await page.waitForFunction(
    (s) => !!document.querySelector(`[data-testid="run-state"] [data-state="${s}"]`),
    { timeout, polling: 'mutation' },
    state,
  );
}

/** How far the page is wider than the viewport (0 = no horizontal scrolling). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(
    'document.documentElement.scrollWidth - document.documentElement.clientWidth',
  ) as Promise<number>;
}

/** Waits until the page's main text contains `text`. */
export async function waitForText(page: Page, text: string, timeout = 20_000): Promise<void> {
  await page.waitForFunction((t) => document.body.innerText.includes(t), { timeout }, text);
}

/** Fills the input, select or textarea labelled `label` (by its <label for>). */
export async function fill(page: Page, label: string, value: string): Promise<void> {
  const id = await page.waitForFunction(
    (text) =>
      [...document.querySelectorAll('label')].find((l) => l.textContent?.trim() === text)?.htmlFor,
    {},
    label,
  );
  const selector = `#${await id.jsonValue()}`;
  const tag = await page.$eval(selector, (el) => el.tagName);
  if (tag === 'SELECT') {
    // Options may still be loading.
    await page.waitForSelector(`${selector} option[value=${JSON.stringify(value)}]`);
    await page.select(selector, value);
  } else {
    await page.$eval(selector, (el) => void ((el as unknown as BrowserElement).value = ''));
    await page.type(selector, value);
  }
}
