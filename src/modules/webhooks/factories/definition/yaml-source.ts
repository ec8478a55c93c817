import { isMap, isSeq, LineCounter, Node, parseDocument } from 'yaml';
import { FileDiagnostics, SourcePosition, START } from './diagnostics';

export type KeyPath = readonly (string | number)[];

/**
 * A parsed YAML text that can say where a key or value sits (line and column in the original
 * file, also when the YAML is the front matter of a Markdown file that starts further down).
 */
export class YamlSource {
  private readonly counter = new LineCounter();
  private readonly doc;
  readonly value: unknown;
  readonly ok: boolean;

  constructor(
    text: string,
    diagnostics: FileDiagnostics,
    private readonly lineOffset = 0,
  ) {
    this.doc = parseDocument(text, { lineCounter: this.counter, uniqueKeys: true });
    for (const error of this.doc.errors) {
      const at = error.linePos?.[0];
      diagnostics.add(
        'yaml_syntax',
        at ? { line: at.line + lineOffset, column: at.col } : this.shift(START),
        `YAML: ${error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`,
      );
    }
    let ok = this.doc.errors.length === 0;
    let value: unknown;
    if (ok) {
      try {
        value = this.doc.toJS({ maxAliasCount: 100 });
      } catch (err) {
        // It parses but has no value: an alias before its anchor, or too many aliases.
        diagnostics.add(
          'yaml_syntax',
          this.shift(START),
          `YAML: ${(err as Error).message.split('\n')[0]}`,
        );
        ok = false;
      }
    }
    this.ok = ok;
    this.value = value;
  }

  /** Where the value at `path` is; the nearest existing parent when it is missing. */
  at(path: KeyPath): SourcePosition {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = this.doc.getIn(path.slice(0, depth), true) as Node | undefined;
      if (node?.range) return this.position(node.range[0]);
    }
    return this.shift(START);
  }

  /** Where the key of the pair at `path` is (for "unknown key" messages). */
  keyAt(path: KeyPath): SourcePosition {
    const parent = path.length > 1 ? this.doc.getIn(path.slice(0, -1), true) : this.doc.contents;
    if (isMap(parent)) {
      const pair = parent.items.find((p) => (p.key as { value?: unknown })?.value === path.at(-1));
      const range = (pair?.key as Node | undefined)?.range;
      if (range) return this.position(range[0]);
    }
    if (isSeq(parent)) return this.at(path);
    return this.at(path);
  }

  private position(offset: number): SourcePosition {
    const { line, col } = this.counter.linePos(offset);
    return { line: line + this.lineOffset, column: col };
  }

  private shift(pos: SourcePosition): SourcePosition {
    return { line: pos.line + this.lineOffset, column: pos.column };
  }
}

/** Splits `---\nyaml\n---\nbody` into the front matter (with its first line) and the body. */
export function splitFrontMatter(
  text: string,
): { yaml: string; yamlFirstLine: number; body: string } | null {
  const normalised = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  const lines = normalised.split('\n');
  let first = 0;
  while (first < lines.length && lines[first].trim() === '') first++;
  if (lines[first]?.trim() !== '---') return null;
  const end = lines.findIndex((line, i) => i > first && line.trim() === '---');
  if (end === -1) return null;
  return {
    yaml: lines.slice(first + 1, end).join('\n'),
    yamlFirstLine: first + 2,
    body: lines
      .slice(end + 1)
      .join('\n')
      .trim(),
  };
}
