import type { Run } from '../runs';

/** The prompt of a judge run: the rubric, the run to judge and how to report the verdicts. */
export function judgePrompt(target: Run, rubric: string): string {
  const example = JSON.stringify({
    verdicts: [{ criterion: 'correctness', score: 0.8, classification: 'pass', reason: '…' }],
  });
  return [
    rubric,
    `You are judging run ${target.id} ("${target.title}"), which ended ${target.state}` +
      (target.statusMessage?.message ? ` with: ${target.statusMessage.message}` : '.'),
    `Its task was:\n${target.prompt}`,
    'Report your verdicts (one per criterion; score from 0 to 1 and/or a classification) with:\n' +
      `curl -sS -X POST "$AMBIENT_API_URL/agent/runs/${target.id}/scores" ` +
      '-H "Authorization: Bearer $AMBIENT_RUN_KEY" -H "Content-Type: application/json" ' +
      `-d '${example}'`,
  ].join('\n\n');
}
