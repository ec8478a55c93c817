/**
 * The first user turn of a run: its prompt (or the skill to use), plus where its attachments were
 * written in the workspace. Shared by Ambient's workers and the self-hosted worker program.
 */
export function initialPrompt(
  run: { prompt: string; skillSpec: string | null },
  attachmentPaths: string[],
): string {
  const prompt = run.prompt || `Use the skill ${run.skillSpec ?? ''}.`.trim();
  if (attachmentPaths.length === 0) return prompt;
  return `${prompt}\n\nAttached files (in the workspace):\n${attachmentPaths.map((p) => `- ${p}`).join('\n')}`;
}
