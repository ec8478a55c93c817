import { useState, type FormEvent } from 'react';
import { api, data, type Schemas } from '../api/client';
import { ErrorMessage, useLoad } from '../components/ui';
import { DataTable, type Column } from '../components/table';
import { EnvironmentOffers } from '../components/EnvironmentOffers';
import { RelativeTime } from '../components/time';
import { linesOf, SelectField, TextArea, TextField } from '../components/form';
import { ruleErrorLine, rulesOf, rulesText } from '../egress';
import { NetworkPolicyPanel } from '../components/NetworkPolicyPanel';
import { RefusalNotice, useRefusal } from '../components/access';
import { useRoute } from '../router';

type Environment = Schemas['Environment'];
type Network = NonNullable<Schemas['UpdateEnvironmentRequest']['network']>;

const NETWORK_OPTIONS = [
  { value: '', label: "The server's default" },
  { value: 'none', label: 'None: no network at all' },
  { value: 'allowlist', label: 'Allowlist: only the hosts listed below' },
  { value: 'egress', label: 'Egress: any outside host' },
] as const;

/** "NAME host host" lines to secret references (the hosts, when given, bind the secret). */
function secretsOf(text: string): Schemas['SecretRef'][] {
  return linesOf(text).map((line) => {
    const [name, ...hosts] = line.split(/\s+/);
    return hosts.length ? { name, inject_hosts: hosts } : { name };
  });
}

function secretsText(secrets: Schemas['SecretRef'][] | undefined): string {
  return (secrets ?? []).map((s) => [s.name, ...(s.inject_hosts ?? [])].join(' ')).join('\n');
}

/** "owner/repo" lines to GitHubRepo objects; throws naming the first line that is not one. */
function reposOf(text: string): Schemas['GitHubRepo'][] {
  return linesOf(text).map((line) => {
    const match = /^([^/\s]+)\/([^/\s]+)$/.exec(line);
    if (!match) throw new Error(`Repository "${line}" is not owner/repo.`);
    return { owner: match[1], repo: match[2].replace(/\.git$/, '') };
  });
}

/** The resource fields as SandboxResources; undefined when all are empty (the server's limits). */
function resourcesOf(fields: { memory: string; cpus: string; pids: string }) {
  const resources: Schemas['SandboxResources'] = {};
  if (fields.memory) resources.memory_mb = Number(fields.memory);
  if (fields.cpus) resources.cpus = Number(fields.cpus);
  if (fields.pids) resources.pids = Number(fields.pids);
  return Object.keys(resources).length ? resources : undefined;
}

function resourcesText(resources?: Schemas['SandboxResources']): string {
  const parts = [
    resources?.memory_mb && `${resources.memory_mb} MB`,
    resources?.cpus && `${resources.cpus} CPU`,
    resources?.pids && `${resources.pids} PIDs`,
  ].filter(Boolean);
  return parts.length ? parts.join(' · ') : 'default';
}

const COLUMNS: Column<Environment>[] = [
  { key: 'name', header: 'Name', primary: true, cell: (environment) => environment.config.name },
  {
    key: 'image',
    header: 'Image',
    cell: (environment) => <code>{environment.config.docker_image ?? 'default'}</code>,
  },
  {
    key: 'repos',
    header: 'Repositories',
    cell: (environment) =>
      environment.config.github_repos.map((r) => `${r.owner}/${r.repo}`).join(', ') || '—',
  },
  {
    key: 'network',
    header: 'Network',
    cell: (environment) => environment.config.network ?? 'default',
  },
  {
    key: 'resources',
    header: 'Resources',
    cell: (environment) => resourcesText(environment.config.resources),
  },
  {
    key: 'setup',
    header: 'Setup',
    cell: (environment) =>
      environment.setup_failed ? (
        <span className="error-text">failed</span>
      ) : (
        `${environment.config.setup_commands.length} commands`
      ),
  },
  {
    key: 'updated',
    header: 'Updated',
    cell: (environment) => <RelativeTime value={environment.last_updated} />,
  },
];

const text = (value: number | null | undefined) => (value == null ? '' : String(value));

function EnvironmentForm({
  environment,
  onSaved,
}: {
  environment?: Environment;
  onSaved: () => void;
}) {
  const config = environment?.config;
  const [name, setName] = useState(config?.name ?? '');
  const [description, setDescription] = useState(config?.description ?? '');
  const [repos, setRepos] = useState(
    (config?.github_repos ?? []).map((r) => `${r.owner}/${r.repo}`).join('\n'),
  );
  const [setup, setSetup] = useState((config?.setup_commands ?? []).join('\n'));
  const [image, setImage] = useState(config?.docker_image ?? '');
  const [secrets, setSecrets] = useState(secretsText(config?.secrets));
  const [memory, setMemory] = useState(text(config?.resources?.memory_mb));
  const [cpus, setCpus] = useState(text(config?.resources?.cpus));
  const [pids, setPids] = useState(text(config?.resources?.pids));
  const [network, setNetwork] = useState<string>(config?.network ?? '');
  const [allow, setAllow] = useState(rulesText(config?.egress_allow));
  const [ruleError, setRuleError] = useState<{ line: number; problem: string } | null>(null);
  const [error, setError] = useState<unknown>();

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    setRuleError(null);
    const egress = rulesOf(allow);
    try {
      const resources = resourcesOf({ memory, cpus, pids });
      const body = {
        name,
        description: description || null,
        github_repos: reposOf(repos),
        setup_commands: linesOf(setup),
        docker_image: image || undefined,
        secrets: secretsOf(secrets),
        // On edit, null clears a value back to the server's default.
        resources: resources ?? (environment ? null : undefined),
        network: (network || (environment ? null : undefined)) as Network | undefined,
        egress_allow: egress.rules.length ? egress.rules : environment ? null : undefined,
      };
      if (environment) {
        await data(
          api.PATCH('/agent/environments/{uid}', {
            params: { path: { uid: environment.uid } },
            body,
          }),
        );
      } else {
        await data(api.POST('/agent/environments', { body }));
      }
      onSaved();
    } catch (failure) {
      const onLine = failure instanceof Error ? ruleErrorLine(failure.message, egress.lines) : null;
      if (onLine) setRuleError(onLine);
      else setError(failure);
    }
  }

  const id = environment ? `env-${environment.uid}` : 'env-new';
  return (
    <form
      className="stack"
      onSubmit={submit}
      aria-label={environment ? `Edit ${name}` : 'New environment'}
    >
      <TextField id={`${id}-name`} label="Name" required value={name} onChange={setName} />
      <TextField
        id={`${id}-description`}
        label="Description"
        value={description}
        onChange={setDescription}
      />
      <fieldset>
        <legend>Code</legend>
        <TextArea
          id={`${id}-repos`}
          label="Repositories (owner/repo, one a line)"
          placeholder="acme/api"
          value={repos}
          onChange={setRepos}
          hint="Cloned into the workspace before the setup commands run."
        />
        <TextArea
          id={`${id}-setup`}
          label="Setup commands (one a line)"
          placeholder="npm ci"
          value={setup}
          onChange={setSetup}
        />
      </fieldset>
      <fieldset>
        <legend>Sandbox</legend>
        <TextField
          id={`${id}-image`}
          label="Docker image"
          placeholder="default"
          value={image}
          onChange={setImage}
        />
        <SelectField
          id={`${id}-network`}
          label="Network"
          value={network}
          onChange={setNetwork}
          options={NETWORK_OPTIONS}
        />
        <TextArea
          id={`${id}-egress-allow`}
          label="Allowed hosts (one rule a line)"
          placeholder={'api.github.com\n*.npmjs.org\napi.example.com GET HEAD'}
          value={allow}
          onChange={setAllow}
          hint={
            network === 'allowlist'
              ? 'host, host:port or *.suffix (ports 443 and 80 when none is given); methods after the host limit it to them.'
              : 'Used only with the Allowlist network.'
          }
        />
        {ruleError && (
          <p className="error" role="alert" data-testid="egress-allow-error">
            Line {ruleError.line}: {ruleError.problem}
          </p>
        )}
        <div className="field-row">
          <div>
            <TextField
              id={`${id}-memory`}
              label="Memory (MB)"
              type="number"
              min={1}
              value={memory}
              onChange={setMemory}
            />
          </div>
          <div>
            <TextField
              id={`${id}-cpus`}
              label="CPUs"
              type="number"
              min={0}
              step="any"
              value={cpus}
              onChange={setCpus}
            />
          </div>
          <div>
            <TextField
              id={`${id}-pids`}
              label="Processes (PIDs)"
              type="number"
              min={1}
              value={pids}
              onChange={setPids}
            />
          </div>
        </div>
        <p className="hint">Empty fields use the server&apos;s limits; larger ones are refused.</p>
        <TextArea
          id={`${id}-secrets`}
          label="Secrets (names, one a line)"
          value={secrets}
          onChange={setSecrets}
          hint="Team secrets given to the runs as environment variables. Hosts after a name (GITHUB_TOKEN api.github.com github.com) bind it: the sandbox sees a placeholder, and the proxy sends the value to those hosts only."
        />
      </fieldset>
      <div className="actions">
        <button type="submit" className="primary">
          {environment ? 'Save environment' : 'Create environment'}
        </button>
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}

export function EnvironmentsPage() {
  const list = useLoad(() => data(api.GET('/agent/environments')), []);
  const [editing, setEditing] = useState<Environment | 'new'>();
  // A link to one environment (?environment=<uid>, from the audit log) marks its row.
  const linked = useRoute().query.get('environment') ?? undefined;
  const refusal = useRefusal('environments.write', 'create or change environments');
  return (
    <section>
      <div className="page-head">
        <h1>Environments</h1>
        <button
          type="button"
          className="primary"
          disabled={refusal !== null}
          onClick={() => setEditing('new')}
        >
          New environment
        </button>
      </div>
      <RefusalNotice refusal={refusal} />
      <ErrorMessage error={list.error} />
      <NetworkPolicyPanel />
      <EnvironmentOffers onChanged={list.reload} />
      {editing && (
        <div className="panel" aria-label="Environment editor">
          <EnvironmentForm
            key={editing === 'new' ? 'new' : editing.uid}
            environment={editing === 'new' ? undefined : editing}
            onSaved={() => {
              setEditing(undefined);
              list.reload();
            }}
          />
          <button type="button" onClick={() => setEditing(undefined)}>
            Close
          </button>
        </div>
      )}
      {list.value && (
        <DataTable
          label="Environments"
          rows={list.value.environments}
          selected={linked}
          columns={[
            ...COLUMNS,
            {
              key: 'actions',
              header: 'Actions',
              hiddenHeader: true,
              cell: (environment) => (
                <button
                  type="button"
                  disabled={refusal !== null}
                  aria-label={`Edit ${environment.config.name}`}
                  onClick={() => setEditing(environment)}
                >
                  Edit
                </button>
              ),
            },
          ]}
          rowKey={(environment) => environment.uid}
          empty={
            <p>
              <strong>No environments yet.</strong> An environment gives runs repositories, setup
              commands, an image and limits: use <em>New environment</em>, then pick it when
              starting a run.
            </p>
          }
        />
      )}
    </section>
  );
}
