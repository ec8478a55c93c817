import { errorCodeLabel } from '../labels';

/**
 * A failed run's error in one line, for a list: its code's label, then the first line of its
 * message without repeating the label ("Environment setup failed: setup command 1 (npm ci)
 * exited with code 3").
 */
export function errorSummary(status: { message: string; error_code?: string }): string {
  const firstLine = status.message.split('\n').find((line) => line.trim()) ?? '';
  if (!status.error_code) return firstLine.trim();
  const label = errorCodeLabel(status.error_code);
  const detail = firstLine.trim();
  const repeated = detail.toLowerCase().startsWith(label.toLowerCase());
  const rest = repeated ? detail.slice(label.length).replace(/^[\s:—-]+/, '') : detail;
  return rest ? `${label}: ${rest}` : label;
}
