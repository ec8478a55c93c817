import { spawn } from 'node:child_process';
import { SlirpNetwork } from './slirp-network';

/**
 * A stand-in for bwrap's child with `--unshare-net --info-fd 3 --block-fd 4`: a fresh user and
 * network namespace that reports its pid on fd 3, and sets up its loopback as bwrap's
 * loopback_setup() does (127.0.0.1/8 added exclusively, then lo up) only once released on fd 4,
 * as a bwrap slowed down by load does. Then it shows the namespace's network.
 */
const SLOW_BWRAP_CHILD =
  `printf '{\\n    "child-pid": %s\\n}\\n' $$ >&3; exec 3>&-; read -r go <&4; ` +
  'ip addr add 127.0.0.1/8 dev lo && ip link set lo up && ip -o -4 addr && ip route';

describe('SlirpNetwork', () => {
  it('leaves lo to bwrap: its loopback setup succeeds even when it comes after the network is ready', async () => {
    const child = spawn('unshare', ['-rn', '/bin/sh', '-c', SLOW_BWRAP_CHILD], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
    });
    const network = SlirpNetwork.attach(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    network.stop();

    // With slirp4netns --configure, lo was already up: "Error: ipv4: Address already assigned."
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/lo\s+inet 127\.0\.0\.1\/8/);
    expect(stdout).toMatch(/tap0\s+inet 10\.0\.2\.100\/24/);
    expect(stdout).toContain('default via 10.0.2.2 dev tap0');
    expect(stdout).toContain('prohibit 169.254.0.0/16');
  }, 20_000);
});
