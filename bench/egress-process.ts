import { EgressAllowList } from '../src/common/egress/egress-allow-list';
import { EgressGuard } from '../src/common/egress/egress-guard';
import { parseEgressRules } from '../src/common/egress/egress-rules';
import { EgressProxy } from '../src/modules/workers/sandbox/egress-proxy/egress-proxy';
import { startUpstreams } from '../test/support/egress-upstreams';

/**
 * The benchmark's other processes, so that the client, the proxy and the upstream servers do
 * not share one event loop: `upstreams` (HTTPS and HTTP servers on 127.0.0.1) or `proxy <json>`
 * (an EgressProxy as an execution would have it). Each reports over IPC once ready.
 */
export interface ProxyProcessConfig {
  socketPath: string;
  httpsPort: number;
  upstreamCa: string;
}

async function main(): Promise<void> {
  const send = (message: unknown) => process.send?.(message);
  process.on('disconnect', () => process.exit(0));
  // The parent asks for CPU time spent, a figure the machine's load does not bend as it does wall time.
  process.on('message', (message) => {
    if (message === 'cpu') send({ cpu: process.cpuUsage() });
  });
  if (process.argv[2] === 'upstreams') {
    const upstreams = await startUpstreams();
    send({
      httpsPort: upstreams.httpsPort,
      httpPort: upstreams.httpPort,
      caPem: upstreams.ca.certPem,
    });
    return;
  }
  const config = JSON.parse(process.argv[3]) as ProxyProcessConfig;
  const port = config.httpsPort;
  const proxy = await EgressProxy.start({
    policy: {
      mode: 'allowlist',
      rules: parseEgressRules([`tunnel.bench:${port}`, `intercept.bench:${port}`]),
      secrets: [
        {
          name: 'BENCH_TOKEN',
          placeholder: 'ambient-placeholder-BENCH_TOKEN',
          value: 'the-real-value',
          hosts: [`intercept.bench:${port}`],
        },
      ],
    },
    guard: new EgressGuard(EgressAllowList.parse('127.0.0.1'), () =>
      Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
    ),
    upstreamCa: [config.upstreamCa],
  });
  await proxy.listen(config.socketPath);
  send({ caPem: proxy.caCertPem });
}

void main();
