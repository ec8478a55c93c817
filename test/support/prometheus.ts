/** The samples of a Prometheus text exposition, e.g. `ambient_runs{state="QUEUED"} 3`. */
export interface Scrape {
  text: string;
  /** The sample of `name` whose labels include `labels` (summed over the others); 0 when none. */
  value(name: string, labels?: Record<string, string>): number;
  /** Whether the exposition declares the series (`# TYPE name …`), with samples or not. */
  declares(name: string): boolean;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseScrape(text: string): Scrape {
  const samples = text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .flatMap((line) => {
      const match = SAMPLE.exec(line);
      if (!match) return [];
      const labels = Object.fromEntries(
        [...(match[2] ?? '').matchAll(LABEL)].map((m) => [m[1], m[2]]),
      );
      return [{ name: match[1], labels, value: Number(match[3]) }];
    });
  return {
    text,
    value: (name, labels = {}) =>
      samples
        .filter(
          (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
        )
        .reduce((sum, s) => sum + s.value, 0),
    declares: (name) => text.includes(`# TYPE ${name} `),
  };
}

export async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`scrape ${url}: ${res.status}`);
  return parseScrape(await res.text());
}
