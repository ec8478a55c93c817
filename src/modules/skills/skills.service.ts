import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { toRfc3339 } from '../../common/time';
import { isSafeRepoPart, Environment, EnvironmentsService } from '../environments';
import { AgentSkillDto, SkillVariantDto } from './dto/skills.dto';
import { RepoCheckouts } from './repo-checkouts.service';
import { chooseByPrefix, discoverSkills, readSkill } from './skill-discovery';
import { ParsedSkill, substituteArguments } from './skill-file';
import { parseSkillSpec } from './skill-spec';

export interface ResolvedSkill extends ParsedSkill {
  /** Canonical id `owner/repo:path/to/SKILL.md`. */
  id: string;
}

export interface SkillListQuery {
  repo?: string;
  refresh: boolean;
  sortBy: 'name' | 'last_run';
  includeMalformed: boolean;
}

/** Skills are SKILL.md files in the repositories of the environments a team can use. */
@Injectable()
export class SkillsService {
  constructor(
    private readonly environments: EnvironmentsService,
    private readonly checkouts: RepoCheckouts,
  ) {}

  /** Resolves a run's skill spec against its environment's repositories; 400 naming `field`. */
  async resolve(
    teamId: string,
    environmentId: string,
    spec: string,
    field: string,
  ): Promise<ResolvedSkill> {
    const parsed = parseSkillSpec(spec);
    if (typeof parsed === 'string') throw ApiError.invalid(field, parsed);
    const { environment } = await this.environments.findVisible(teamId, environmentId);
    const repos = (environment.config.github_repos ?? []).filter(
      (r) =>
        (!parsed.repo || r.repo === parsed.repo) && (!parsed.owner || r.owner === parsed.owner),
    );
    if (!repos.length) {
      const which = parsed.repo
        ? `repository "${parsed.owner ? `${parsed.owner}/` : ''}${parsed.repo}"`
        : 'repositories';
      throw ApiError.invalid(field, `the environment has no ${which}`);
    }
    const matches: ResolvedSkill[] = [];
    const problems: string[] = [];
    for (const { owner, repo } of repos) {
      let dir: string;
      try {
        dir = await this.checkouts.checkout(teamId, owner, repo);
      } catch (err) {
        problems.push((err as Error).message);
        continue;
      }
      const candidates = parsed.isPath
        ? [await readSkill(dir, parsed.identifier.replace(/\/?(SKILL\.md)?$/i, '/SKILL.md'))]
        : (await discoverSkills(dir)).filter(
            (s) =>
              s.skill?.name === parsed.identifier || s.path.split('/').at(-2) === parsed.identifier,
          );
      const usable = candidates.filter((c) => c.skill);
      if (!usable.length) {
        if (candidates[0]?.error) problems.push(`${owner}/${repo}: ${candidates[0].error}`);
        continue;
      }
      const chosen = chooseByPrefix(usable);
      if ('ambiguous' in chosen) {
        throw ApiError.invalid(
          field,
          `"${spec}" is ambiguous in ${owner}/${repo} (${chosen.ambiguous.join(', ')}); specify the skill's path as repo:path/to/SKILL.md`,
        );
      }
      matches.push({ ...chosen.skill!, id: `${owner}/${repo}:${chosen.path}` });
    }
    if (matches.length > 1) {
      throw ApiError.invalid(field, `"${spec}" is ambiguous; specify as repo:skill_name`);
    }
    if (!matches.length) {
      const why = problems.length ? ` (${problems.join('; ')})` : '';
      throw ApiError.invalid(field, `skill "${spec}" was not found in the environment${why}`);
    }
    return matches[0];
  }

  /**
   * The skills of the team's environments; `lastRuns` is when the team last ran each skill spec
   * (LatestRunRepository.lastRunBySkillSpec: the runs module imports this one, so the caller reads it).
   */
  async list(
    teamId: string,
    query: SkillListQuery,
    lastRuns: Map<string, Date>,
  ): Promise<AgentSkillDto[]> {
    if (query.refresh) this.checkouts.clear(teamId);
    const repoFilter = query.repo ? parseRepo(query.repo) : null;
    const visible = await this.environments.listVisible(teamId, 'name');
    const variants = new Map<string, SkillVariantDto>();
    for (const { environment } of visible) {
      for (const { owner, repo } of environment.config.github_repos ?? []) {
        if (repoFilter && (repoFilter.owner !== owner || repoFilter.repo !== repo)) continue;
        await this.collect(teamId, environment, owner, repo, query.includeMalformed, variants);
      }
    }
    const byName = new Map<string, SkillVariantDto[]>();
    for (const variant of variants.values()) {
      variant.last_run_timestamp = toRfc3339(lastRuns.get(variant.id) ?? null);
      const name = variant.name;
      byName.set(name, [...(byName.get(name) ?? []), variant]);
    }
    const agents = [...byName.entries()].map(([name, list]) => ({
      name,
      variants: list.map(({ name: _name, ...rest }) => rest),
    }));
    const lastRun = (a: AgentSkillDto) =>
      a.variants
        .map((v) => v.last_run_timestamp ?? '')
        .sort()
        .at(-1) ?? '';
    return agents.sort((a, b) =>
      query.sortBy === 'last_run'
        ? lastRun(b).localeCompare(lastRun(a)) || a.name.localeCompare(b.name)
        : a.name.localeCompare(b.name),
    );
  }

  /** Substitutes the run's prompt into the skill body; the base prompt the harness uses. */
  static basePrompt(skill: ParsedSkill, args: string): string {
    return substituteArguments(skill.body, args) ?? skill.body;
  }

  private async collect(
    teamId: string,
    environment: Environment,
    owner: string,
    repo: string,
    includeMalformed: boolean,
    variants: Map<string, SkillVariantDto>,
  ): Promise<void> {
    let dir: string;
    try {
      dir = await this.checkouts.checkout(teamId, owner, repo);
    } catch {
      return; // An unreachable repository contributes no skills; runs in it fail at setup.
    }
    for (const found of await discoverSkills(dir)) {
      if (!found.skill && !includeMalformed) continue;
      const id = `${owner}/${repo}:${found.path}`;
      const existing = variants.get(id);
      const env = { uid: environment.id, name: environment.name };
      if (existing) {
        existing.environments.push(env);
        continue;
      }
      variants.set(id, {
        name: found.skill?.name ?? found.path.split('/').at(-2) ?? found.path,
        id,
        description: found.skill?.description ?? '',
        base_prompt: found.skill?.body ?? '',
        source: { owner, name: repo, skill_path: found.path },
        environments: [env],
        last_run_timestamp: null,
        ...(found.error ? { error: found.error } : {}),
      });
    }
  }
}

function parseRepo(text: string): { owner: string; repo: string } {
  const match = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(text);
  if (!match || !isSafeRepoPart(match[1]) || !isSafeRepoPart(match[2])) {
    throw ApiError.invalid('repo', 'must be "owner/repo"');
  }
  return { owner: match[1], repo: match[2] };
}
