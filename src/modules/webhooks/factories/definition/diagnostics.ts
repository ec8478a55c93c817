/** One problem found in a definition file: the Oz `diagnostics[]` item shape. */
export interface Diagnostic {
  code: string;
  path: string;
  line: number;
  column: number;
  message: string;
}

export interface SourcePosition {
  line: number;
  column: number;
}

export const START: SourcePosition = { line: 1, column: 1 };

/** Collects diagnostics for one file, so checks can say "here, this" without repeating the path. */
export class FileDiagnostics {
  constructor(
    readonly path: string,
    private readonly sink: Diagnostic[],
  ) {}

  add(code: string, at: SourcePosition, message: string): void {
    this.sink.push({ code, path: this.path, line: at.line, column: at.column, message });
  }
}

export function formatDiagnostic(d: Diagnostic): string {
  return `${d.path}:${d.line}:${d.column}: ${d.message}`;
}

/** By file, then position. */
export function sortDiagnostics(diagnostics: Diagnostic[]): Diagnostic[] {
  return [...diagnostics].sort(
    (a, b) => a.path.localeCompare(b.path) || a.line - b.line || a.column - b.column,
  );
}
