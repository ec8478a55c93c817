export type LogLine = Record<string, unknown>;

/** The JSON lines of a child's output (the first-key banner and the like are not JSON). */
export function jsonLines(output: string): LogLine[] {
  return output.split('\n').flatMap((line) => {
    try {
      const parsed = JSON.parse(line) as unknown;
      return parsed && typeof parsed === 'object' ? [parsed as LogLine] : [];
    } catch {
      return [];
    }
  });
}
