import { parse as parseYaml } from 'yaml';

export interface ParsedSkill {
  name: string;
  description: string;
  body: string;
}

const MAX_DESCRIPTION = 512;
const FRONT_MATTER = /^\s*---\r?\n([\s\S]*?)(?:\r?\n)?^---[ \t]*(?:\r?\n|$)/m;

/**
 * Parses SKILL.md leniently (as Warp's client does): YAML front matter between `---` lines, only
 * string values kept; `name` falls back to the skill's directory, `description` to the body's
 * first paragraph that is not a heading, cut to 512 characters at a sentence end. Throws with a
 * readable reason when the file cannot be a skill.
 */
export function parseSkillFile(text: string, dirName: string): ParsedSkill {
  const found = FRONT_MATTER.exec(text);
  // Multiline mode lets `^` find the closing line; the front matter itself must open the file.
  const match = found?.index === 0 ? found : null;
  let fields: Record<string, string> = {};
  let body = text;
  if (match) {
    body = text.slice(match[0].length);
    let parsed: unknown;
    try {
      parsed = parseYaml(match[1]);
    } catch (err) {
      throw new Error(`front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
    }
    if (parsed !== null && parsed !== undefined && typeof parsed !== 'object') {
      throw new Error('front matter must be a mapping');
    }
    fields = Object.fromEntries(
      Object.entries((parsed ?? {}) as Record<string, unknown>).filter(
        (entry): entry is [string, string] => typeof entry[1] === 'string',
      ),
    );
  }
  body = body.replace(/\r\n/g, '\n').trim();
  const name = fields.name?.trim() || dirName;
  const description = truncate(fields.description?.trim() || firstParagraph(body));
  if (!body && !description) throw new Error('SKILL.md has neither a body nor a description');
  return { name, description, body };
}

function firstParagraph(body: string): string {
  const paragraph = body
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .find((p) => p && !p.startsWith('#'));
  return paragraph?.replace(/\s+/g, ' ') ?? '';
}

function truncate(text: string): string {
  if (text.length <= MAX_DESCRIPTION) return text;
  const head = text.slice(0, MAX_DESCRIPTION);
  const end = Math.max(head.lastIndexOf('. '), head.lastIndexOf('! '), head.lastIndexOf('? '));
  return end > 0 ? head.slice(0, end + 1) : head;
}

/**
 * `$ARGUMENTS` (all), `$ARGUMENTS[N]` and `$N` (zero-based, split on whitespace); a position not
 * provided stays literal. Returns null when the body has no placeholder at all.
 */
export function substituteArguments(body: string, args: string): string | null {
  const pattern = /\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS|\$(\d+)/g;
  if (!pattern.test(body)) return null;
  const words = args.trim() ? args.trim().split(/\s+/) : [];
  return body.replace(pattern, (whole, indexed?: string, positional?: string) => {
    const index = indexed ?? positional;
    if (index === undefined) return args.trim();
    return words[Number(index)] ?? whole;
  });
}
