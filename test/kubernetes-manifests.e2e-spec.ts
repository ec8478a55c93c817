import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { API_PREFIX } from '../src/config/api-prefix';
import { migrateCommand } from '../src/cli/migrate-command';
import { RUN_STATES } from '../src/modules/runs/run-state';
import { RUNS_QUEUE } from '../src/modules/runs/run-queue.service';
import { DELIVERIES_QUEUE } from '../src/modules/webhooks/delivery-evaluation.queue';
import {
  allFiles,
  Container,
  envValue,
  K8sObject,
  KUBERNETES_DIR,
  PodTemplate,
  readKustomization,
  ROOT,
  selects,
} from './support/kubernetes-manifests';
import { AmbientMetrics } from '../src/modules/metrics/ambient-metrics';

const ROLES = ['api', 'ingress', 'worker', 'scheduler'] as const;
const LIVE = `/${API_PREFIX}/health/live`;
const READY = `/${API_PREFIX}/health/ready`;

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  const base = readKustomization(join(KUBERNETES_DIR, 'base'));
  const monitoring = readKustomization(join(KUBERNETES_DIR, 'monitoring'));
  const example = readKustomization(join(KUBERNETES_DIR, 'overlays/example'));
  const objects = example.objects;
  const defaults = parseYaml(readFileSync(join(ROOT, 'config/default.yaml'), 'utf8')) as {
    server: { port: number; shutdownTimeoutMs: number };
    ingress: { port: number };
    runs: { workspaceRoot: string };
  };
  const config = objects.find(
    (o) => o.kind === 'ConfigMap' && o.metadata.name === 'ambient-config',
  )!.data!;
  const metricsPort = Number(config.AMBIENT_METRICS_PORT);

  const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
  const deployment = (role: string) =>
    ofKind('Deployment').find((o) => o.metadata.name === `ambient-${role}`)!;
  const template = (o: K8sObject) => o.spec!.template as PodTemplate;
  const main = (o: K8sObject) => template(o).spec.containers.find((c) => c.name === 'ambient')!;
  const workloads = () => [...ofKind('Deployment'), ...ofKind('Job')];
  const containersOf = (o: K8sObject): Container[] => [
    ...(template(o).spec.initContainers ?? []),
    ...template(o).spec.containers,
  ];
  const portNumber = (container: Container, port: string | number) =>
    typeof port === 'number'
      ? container.ports?.find((p) => p.containerPort === port)?.containerPort
      : container.ports?.find((p) => p.name === port)?.containerPort;

  it('lists only files that exist and parse, and leaves no manifest unlisted', () => {
    const listed = new Set([...base.files, ...monitoring.files, ...example.files]);
    const unlisted = allFiles()
      .filter((file) => !listed.has(file))
      .map((file) => relative(KUBERNETES_DIR, file));
    expect(unlisted).toEqual(['base/secret.example.yaml']);
    expect(objects.length).toBeGreaterThan(15);
    for (const o of objects) {
      expect({
        file: o.file,
        apiVersion: o.apiVersion,
        kind: o.kind,
        name: o.metadata?.name,
      }).toEqual({
        file: o.file,
        apiVersion: expect.stringMatching(/^[a-z0-9.]*\/?v\d/),
        kind: expect.stringMatching(/^[A-Z]/),
        name: expect.stringMatching(/^[a-z0-9-]+$/),
      });
    }
  });

  it('runs each role in its own Deployment from one image, AMBIENT_ROLES set to exactly that role', () => {
    expect(
      ofKind('Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(ROLES.map((role) => `ambient-${role}`).sort());
    for (const role of ROLES) {
      expect(envValue(main(deployment(role)), 'AMBIENT_ROLES')).toEqual({
        name: 'AMBIENT_ROLES',
        value: role,
      });
      expect(template(deployment(role)).metadata.labels['app.kubernetes.io/component']).toBe(role);
    }
    const images = new Set(workloads().flatMap((o) => containersOf(o).map((c) => c.image)));
    // One image name, which the kustomizations point at a registry and tag.
    expect([...images]).toEqual(['ambient']);
    expect(base.kustomization.images?.map((image) => image.name)).toEqual(['ambient']);
    expect(example.kustomization.images).toEqual([
      { name: 'ambient', newName: 'registry.example.com/ambient', newTag: '0.1.0' },
    ]);
  });

  it('exposes the configured ports: API and ingress from config/default.yaml, metrics and health from the env', () => {
    expect(portNumber(main(deployment('api')), 'http')).toBe(defaults.server.port);
    expect(portNumber(main(deployment('ingress')), 'http')).toBe(defaults.ingress.port);
    for (const role of ROLES) {
      expect(portNumber(main(deployment(role)), 'metrics')).toBe(metricsPort);
      expect(template(deployment(role)).spec.containers[0].envFrom).toContainEqual({
        configMapRef: { name: 'ambient-config' },
      });
    }
    for (const role of ['worker', 'scheduler']) {
      const container = main(deployment(role));
      const healthPort = Number(envValue(container, 'AMBIENT_HEALTH_PORT')?.value);
      expect(healthPort).toBe(8082);
      expect(portNumber(container, 'health')).toBe(healthPort);
    }
  });

  it('probes the live and ready paths on a port the container serves them on', () => {
    const healthPort = { api: 'http', ingress: 'http', worker: 'health', scheduler: 'health' };
    for (const role of ROLES) {
      const container = main(deployment(role));
      for (const [probe, path] of [
        [container.livenessProbe, LIVE],
        [container.startupProbe, LIVE],
        [container.readinessProbe, READY],
      ] as const) {
        expect({ role, path: probe?.httpGet?.path }).toEqual({ role, path });
        expect({ role, port: probe?.httpGet?.port }).toEqual({ role, port: healthPort[role] });
        expect(portNumber(container, probe!.httpGet!.port)).toBeDefined();
      }
    }
  });

  it('routes every Service to pods that have its target ports', () => {
    for (const service of ofKind('Service')) {
      const selector = service.spec!.selector as Record<string, string>;
      const pods = workloads().filter((o) => selects(selector, template(o).metadata.labels));
      expect({ service: service.metadata.name, pods: pods.length > 0 }).toEqual({
        service: service.metadata.name,
        pods: true,
      });
      for (const port of service.spec!.ports as { name: string; targetPort: string | number }[]) {
        for (const pod of pods) {
          const where = { service: service.metadata.name, pod: pod.metadata.name, port: port.name };
          const found = portNumber(main(pod), port.targetPort) !== undefined;
          expect({ ...where, found }).toEqual({ ...where, found: true });
        }
      }
    }
    const scraped = ofKind('Service').find((s) => s.metadata.name === 'ambient-metrics')!;
    const scrapedPods = workloads().filter((o) =>
      selects(scraped.spec!.selector as Record<string, string>, template(o).metadata.labels),
    );
    expect(scrapedPods.map((o) => o.metadata.name).sort()).toEqual(
      ROLES.map((role) => `ambient-${role}`).sort(),
    );
    expect(ofKind('Service').find((s) => s.metadata.name === 'ambient-api')!.spec!.ports).toEqual([
      expect.objectContaining({ port: defaults.server.port }),
    ]);
    expect(
      ofKind('Service').find((s) => s.metadata.name === 'ambient-ingress')!.spec!.ports,
    ).toEqual([expect.objectContaining({ port: defaults.ingress.port })]);
  });

  it('scales api, ingress and worker with HPAs and guards every role with a PDB', () => {
    const hpas = ofKind('HorizontalPodAutoscaler');
    expect(hpas.map((h) => h.apiVersion)).toEqual(hpas.map(() => 'autoscaling/v2'));
    const targets = hpas.map(
      (h) => (h.spec!.scaleTargetRef as { kind: string; name: string }).name,
    );
    expect(targets.sort()).toEqual(['ambient-api', 'ambient-ingress', 'ambient-worker']);
    for (const hpa of hpas) {
      const ref = hpa.spec!.scaleTargetRef as { kind: string; name: string };
      expect(ref.kind).toBe('Deployment');
      expect(hpa.spec!.minReplicas as number).toBeLessThanOrEqual(hpa.spec!.maxReplicas as number);
    }
    for (const pdb of ofKind('PodDisruptionBudget')) {
      const selector = (pdb.spec!.selector as { matchLabels: Record<string, string> }).matchLabels;
      const matched = workloads().filter((o) => selects(selector, template(o).metadata.labels));
      expect({ pdb: pdb.metadata.name, matched: matched.map((o) => o.metadata.name) }).toEqual({
        pdb: pdb.metadata.name,
        matched: [pdb.metadata.name],
      });
    }
    expect(ofKind('PodDisruptionBudget')).toHaveLength(ROLES.length);
  });

  it('migrates in a Job with the CLI migrate command; the roles only wait for it (migrate --check)', () => {
    expect(config.AMBIENT_MIGRATE_ON_START).toBe('false');
    expect(migrateCommand.name).toBe('migrate');
    expect(Object.keys(migrateCommand.options)).toContain('check');
    // `npm run build` compiles src/ into dist/src/ (package.json "start": node dist/src/main.js).
    const cli = ['node', 'dist/src/cli/main.js'];
    const [job] = ofKind('Job');
    expect(template(job).spec.containers.map((c) => c.command)).toEqual([[...cli, 'migrate']]);
    for (const role of ROLES) {
      expect(template(deployment(role)).spec.initContainers?.map((c) => c.command)).toEqual([
        [...cli, 'migrate', '--check'],
      ]);
    }
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.start).toBe('node dist/src/main.js');
  });

  it('reads secrets from the one Secret, each under a setting the code reads', () => {
    const known = knownSettings();
    for (const o of workloads()) {
      for (const container of containersOf(o)) {
        for (const variable of container.env ?? []) {
          expect({
            where: o.metadata.name,
            name: variable.name,
            known: known.has(variable.name),
          }).toEqual({ where: o.metadata.name, name: variable.name, known: true });
          const ref = variable.valueFrom?.secretKeyRef;
          if (ref) expect(ref).toMatchObject({ name: 'ambient-secrets', key: variable.name });
        }
      }
    }
    for (const name of Object.keys(config))
      expect({ name, known: known.has(name) }).toEqual({ name, known: true });
    const example = readFileSync(join(KUBERNETES_DIR, 'base/secret.example.yaml'), 'utf8');
    const secret = parseYaml(example) as {
      metadata: { name: string };
      stringData: Record<string, string>;
    };
    expect(secret.metadata.name).toBe('ambient-secrets');
    for (const key of Object.keys(secret.stringData))
      expect({ key, known: known.has(key) }).toEqual({ key, known: true });
    // Every role has the two keys (NODE_ENV=production refuses to start without them).
    for (const role of ROLES) {
      for (const key of [
        'AMBIENT_SECRETS_KEY',
        'AMBIENT_URL_SIGNING_KEY',
        'DATABASE_URL',
        'REDIS_URL',
      ]) {
        expect(envValue(main(deployment(role)), key)?.valueFrom?.secretKeyRef).toEqual({
          name: 'ambient-secrets',
          key,
        });
      }
    }
  });

  it('runs every container as non-root, read-only, without capabilities; only the worker relaxes seccomp for bubblewrap', () => {
    for (const o of workloads()) {
      const pod = template(o).spec;
      expect({ name: o.metadata.name, pod: pod.securityContext }).toMatchObject({
        pod: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
      });
      for (const container of containersOf(o)) {
        expect(container.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        const relaxed = container.securityContext?.seccompProfile?.type;
        expect({ container: `${o.metadata.name}/${container.name}`, relaxed }).toEqual({
          container: `${o.metadata.name}/${container.name}`,
          relaxed:
            o.metadata.name === 'ambient-worker' && container.name === 'ambient'
              ? 'Unconfined'
              : undefined,
        });
      }
    }
    const worker = template(deployment('worker')).spec;
    expect(worker.hostUsers).toBe(false);
    expect(envValue(main(deployment('worker')), 'AMBIENT_SANDBOX')?.value).toBe('bubblewrap');
    expect(main(deployment('worker')).securityContext?.procMount).toBe('Unmasked');
    // The workspace root (relative to WORKDIR /app) lies on the writable var volume.
    const workdir = /^WORKDIR (\S+)$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))![1];
    const varMount = main(deployment('worker')).volumeMounts!.find((m) => m.name === 'var')!;
    expect(join(workdir, defaults.runs.workspaceRoot).startsWith(`${varMount.mountPath}/`)).toBe(
      true,
    );
  });

  it('gives SIGTERM the time main.ts takes to stop (shutdown timeout + 10 s)', () => {
    for (const role of ROLES) {
      const own = envValue(main(deployment(role)), 'AMBIENT_SHUTDOWN_TIMEOUT_MS')?.value;
      const shutdownMs = Number(own ?? defaults.server.shutdownTimeoutMs);
      const grace = template(deployment(role)).spec.terminationGracePeriodSeconds ?? 30;
      expect({ role, enough: grace >= shutdownMs / 1000 + 10 }).toEqual({ role, enough: true });
    }
  });

  it('scrapes /metrics on every pod through the ServiceMonitor', () => {
    const [monitor] = ofKind('ServiceMonitor');
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    const service = ofKind('Service').find((s) =>
      selects(
        (monitor.spec!.selector as { matchLabels: Record<string, string> }).matchLabels,
        s.metadata.labels ?? {},
      ),
    )!;
    expect(service.metadata.name).toBe('ambient-metrics');
    const [endpoint] = monitor.spec!.endpoints as { port: string; path: string }[];
    expect(endpoint.path).toBe('/metrics');
    expect((service.spec!.ports as { name: string }[]).map((p) => p.name)).toContain(endpoint.port);
    // The listener defaults to loopback: pods open it to the scraper, on the metrics port only.
    expect(config.AMBIENT_METRICS_HOST).toBe('0.0.0.0');
    expect(config.AMBIENT_METRICS_TOKEN).toBeUndefined();
    for (const exposed of ofKind('Service').filter((s) => s !== service)) {
      const ports = exposed.spec!.ports as { port: number; targetPort: string | number }[];
      const reaches = ports.some((p) => p.port === metricsPort || p.targetPort === 'metrics');
      expect({ service: exposed.metadata.name, reaches }).toEqual({
        service: exposed.metadata.name,
        reaches: false,
      });
    }
  });

  describe('alerts and dashboard', () => {
    const [rule] = ofKind('PrometheusRule');
    const groups = rule.spec!.groups as {
      rules: { alert: string; expr: string; labels: Record<string, string> }[];
    }[];
    const alerts = groups.flatMap((group) => group.rules);
    const dashboard = JSON.parse(
      readFileSync(join(KUBERNETES_DIR, 'monitoring/grafana-dashboard.json'), 'utf8'),
    ) as { uid: string; panels: { id: number; type: string; targets?: { expr: string }[] }[] };
    const panelExprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));

    it('alerts on queue age, API 5xx rate, stuck runs, webhook 429s, worker disconnects and starved database work', () => {
      const using = (metric: string) =>
        alerts.filter((a) => a.expr.includes(metric)).map((a) => a.alert);
      expect(using('ambient_queue_oldest_job_age_seconds')).toContain('AmbientQueueBacklog');
      expect(alerts.find((a) => a.alert === 'AmbientApiErrorRate')!.expr).toMatch(
        /status_code=~"5\.\."/,
      );
      expect(using('ambient_runs{')).toEqual(['AmbientRunsStuck']);
      expect(using('ambient_webhook_rate_limited_total')).toEqual(['AmbientWebhookRateLimited']);
      expect(using('ambient_self_hosted_worker_disconnects_total')).toEqual([
        'AmbientSelfHostedWorkerDisconnects',
      ]);
      expect(using('ambient_db_background_oldest_wait_seconds')).toEqual([
        'AmbientDatabaseConnectionsStarved',
      ]);
      for (const alert of alerts) expect(['warning', 'critical']).toContain(alert.labels.severity);
    });

    it('uses only metric names the code registers, and label values that exist', () => {
      const registered = registeredMetrics();
      const exprs = [...alerts.map((a) => a.expr), ...panelExprs];
      const used = new Set(exprs.flatMap((expr) => expr.match(/\bambient_[a-z0-9_]+/g) ?? []));
      for (const name of used) {
        const metric = registered.has(name) ? name : name.replace(/_(bucket|count|sum)$/, '');
        expect({ name, registered: registered.has(metric) }).toEqual({ name, registered: true });
      }
      for (const expr of exprs) {
        for (const [, metric, states] of expr.matchAll(
          /\b(ambient_[a-z0-9_]+)\{[^}]*\bstate=~?"([^"]+)"/g,
        )) {
          const known = STATES_OF[metric] ?? RUN_STATES;
          for (const state of states.split('|'))
            expect({ metric, state }).toEqual({
              metric,
              state: known.includes(state) ? state : `one of ${known.join(', ')}`,
            });
        }
        for (const [, queue] of expr.matchAll(/queue="([^"]+)"/g)) {
          expect([RUNS_QUEUE, DELIVERIES_QUEUE]).toContain(queue);
        }
      }
    });

    it('has a Grafana dashboard whose panels all query the chosen Prometheus', () => {
      expect(dashboard.uid).toBe('ambient-overview');
      const ids = dashboard.panels.map((p) => p.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(panelExprs.length).toBeGreaterThan(15);
      for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
        expect(panel).toMatchObject({ datasource: { type: 'prometheus', uid: '${datasource}' } });
      }
    });

    // promtool (Debian package prometheus) evaluates the alerts on synthetic series.
    (hasCommand('promtool') ? it : it.skip)(
      'fires each alert on series that should fire it (promtool)',
      () => {
        const dir = mkdtempSync(join(tmpdir(), 'ambient-rules-'));
        // Annotations are prose; the tests are about expressions, durations and labels.
        const plain = groups.map((group) => ({
          ...group,
          rules: group.rules.map(({ alert, expr, labels, ...rest }) => ({
            alert,
            expr,
            labels,
            for: (rest as { for?: string }).for,
          })),
        }));
        try {
          writeFileSync(join(dir, 'rules.yaml'), stringifyYaml({ groups: plain }));
          writeFileSync(join(dir, 'tests.yaml'), stringifyYaml(ALERT_TESTS));
          execFileSync('promtool', ['check', 'rules', join(dir, 'rules.yaml')], { stdio: 'pipe' });
          const result = spawnSync('promtool', ['test', 'rules', join(dir, 'tests.yaml')], {
            encoding: 'utf8',
          });
          expect(result.stdout + result.stderr).toContain('SUCCESS');
          expect(result.status).toBe(0);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    );
  });

  (hasCommand('kubectl') ? it : it.skip)('builds with kustomize (kubectl kustomize)', () => {
    for (const dir of ['base', 'monitoring', 'overlays/example']) {
      const built = execFileSync('kubectl', ['kustomize', join(KUBERNETES_DIR, dir)], {
        encoding: 'utf8',
      });
      expect(built).toContain('kind: ');
    }
    const overlay = execFileSync(
      'kubectl',
      ['kustomize', join(KUBERNETES_DIR, 'overlays/example')],
      {
        encoding: 'utf8',
      },
    );
    expect(overlay).toContain('image: registry.example.com/ambient:0.1.0');
    expect(overlay).not.toMatch(/image: ambient$/m);
  });
});

/** Environment variables the code reads: config settings, direct env reads, provider keys. */
function knownSettings(): Set<string> {
  // The settings table and loadConfig live in src/config, one file per concern.
  const configDir = join(ROOT, 'src/config');
  const config = readdirSync(configDir)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
    .map((file) => readFileSync(join(configDir, file), 'utf8'))
    .join('\n');
  const names = new Set<string>();
  for (const [, name] of config.matchAll(/env: '([A-Z0-9_]+)'/g)) names.add(name);
  for (const [, name] of config.matchAll(/env\.([A-Z0-9_]+)/g)) names.add(name);
  const models = readFileSync(join(ROOT, 'config/models.yaml'), 'utf8');
  for (const [, name] of models.matchAll(/api_key_env: ([A-Z0-9_]+)/g)) names.add(name);
  return names;
}

/** Every series name Ambient's registry exposes (its own and Node's default metrics). */
function registeredMetrics(): Set<string> {
  return new Set(new AmbientMetrics().registry.getMetricsAsArray().map((metric) => metric.name));
}

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

/** The `state` label's values of the series that have one beside `ambient_runs` (run states). */
const STATES_OF: Record<string, readonly string[]> = {
  ambient_queue_jobs: ['waiting', 'active', 'delayed'],
  ambient_db_background_connections: ['in_use', 'limit', 'waiting'],
};

/** promtool unit tests: one series per pod (deployment-wide gauges repeat on every pod). */
const ALERT_TESTS = {
  rule_files: ['rules.yaml'],
  evaluation_interval: '1m',
  tests: [
    {
      interval: '1m',
      input_series: [
        { series: 'ambient_queue_oldest_job_age_seconds{queue="runs",pod="a"}', values: '0+30x40' },
        { series: 'ambient_queue_oldest_job_age_seconds{queue="runs",pod="b"}', values: '0+30x40' },
        {
          series: 'ambient_queue_oldest_job_age_seconds{queue="webhook-deliveries",pod="a"}',
          values: '0x40',
        },
      ],
      alert_rule_test: [
        { eval_time: '8m', alertname: 'AmbientQueueBacklog', exp_alerts: [] },
        {
          eval_time: '20m',
          alertname: 'AmbientQueueBacklog',
          exp_alerts: [{ exp_labels: { queue: 'runs', severity: 'warning' } }],
        },
      ],
    },
    {
      interval: '1m',
      input_series: [
        { series: 'ambient_runs{state="QUEUED",pod="a"}', values: '3x60' },
        { series: 'ambient_runs{state="QUEUED",pod="b"}', values: '3x60' },
        { series: 'ambient_runs{state="INPROGRESS",pod="a"}', values: '1x60' },
        {
          series: 'ambient_run_duration_seconds_count{outcome="SUCCEEDED",pod="a"}',
          values: '5x60',
        },
      ],
      alert_rule_test: [
        { eval_time: '20m', alertname: 'AmbientRunsStuck', exp_alerts: [] },
        {
          eval_time: '45m',
          alertname: 'AmbientRunsStuck',
          exp_alerts: [{ exp_labels: { state: 'QUEUED', severity: 'warning' } }],
        },
      ],
    },
    {
      interval: '1m',
      input_series: [
        { series: 'ambient_runs{state="QUEUED",pod="a"}', values: '3x60' },
        {
          series: 'ambient_run_duration_seconds_count{outcome="SUCCEEDED",pod="a"}',
          values: '0+1x60',
        },
      ],
      alert_rule_test: [{ eval_time: '45m', alertname: 'AmbientRunsStuck', exp_alerts: [] }],
    },
    {
      interval: '1m',
      input_series: [
        {
          series:
            'ambient_http_request_duration_seconds_count{route="/api/v1/agent/runs",status_code="500",pod="a"}',
          values: '0+60x40',
        },
        {
          series:
            'ambient_http_request_duration_seconds_count{route="/api/v1/agent/runs",status_code="200",pod="a"}',
          values: '0+600x40',
        },
        {
          series:
            'ambient_http_request_duration_seconds_count{route="/webhooks/w/:uid",status_code="503",pod="b"}',
          values: '0+6000x40',
        },
      ],
      alert_rule_test: [
        {
          eval_time: '25m',
          alertname: 'AmbientApiErrorRate',
          exp_alerts: [{ exp_labels: { severity: 'critical' } }],
        },
      ],
    },
    {
      interval: '1m',
      input_series: [
        {
          series:
            'ambient_http_request_duration_seconds_count{route="/api/v1/agent/runs",status_code="500",pod="a"}',
          values: '0+1x40',
        },
        {
          series:
            'ambient_http_request_duration_seconds_count{route="/api/v1/agent/runs",status_code="200",pod="a"}',
          values: '0+600x40',
        },
      ],
      alert_rule_test: [{ eval_time: '25m', alertname: 'AmbientApiErrorRate', exp_alerts: [] }],
    },
    {
      interval: '1m',
      input_series: [
        {
          series: 'ambient_webhook_rate_limited_total{reason="auth_failures",pod="a"}',
          values: '0+20x40',
        },
        {
          series: 'ambient_webhook_rate_limited_total{reason="deliveries",pod="a"}',
          values: '0+2x40',
        },
        { series: 'ambient_self_hosted_worker_disconnects_total{pod="a"}', values: '0+1x40' },
        { series: 'ambient_self_hosted_workers_connected{pod="a"}', values: '2x10 0x30' },
      ],
      alert_rule_test: [
        {
          eval_time: '30m',
          alertname: 'AmbientWebhookRateLimited',
          exp_alerts: [{ exp_labels: { reason: 'auth_failures', severity: 'warning' } }],
        },
        {
          eval_time: '30m',
          alertname: 'AmbientSelfHostedWorkerDisconnects',
          exp_alerts: [{ exp_labels: { severity: 'warning' } }],
        },
        {
          eval_time: '30m',
          alertname: 'AmbientSelfHostedWorkersGone',
          exp_alerts: [{ exp_labels: { severity: 'warning' } }],
        },
      ],
    },
    {
      interval: '1m',
      input_series: [
        // A burst's waits (seconds, then none) and one that only grows, on another pod.
        { series: 'ambient_db_background_oldest_wait_seconds{pod="a"}', values: '0 2 5 0x20' },
        { series: 'ambient_db_background_oldest_wait_seconds{pod="b"}', values: '0x5 0+60x20' },
      ],
      alert_rule_test: [
        { eval_time: '6m', alertname: 'AmbientDatabaseConnectionsStarved', exp_alerts: [] },
        {
          eval_time: '12m',
          alertname: 'AmbientDatabaseConnectionsStarved',
          exp_alerts: [{ exp_labels: { pod: 'b', severity: 'warning' } }],
        },
      ],
    },
  ],
};
