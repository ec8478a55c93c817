import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { shellQuote, supervisorScript } from './container-launcher';

const WORDS = ['plain', "it's", '"double" $HOME `id` $(id) \\n', 'new\nline', '', '--', '-x', '*'];

describe('container launcher scripts', () => {
  it('quotes every argument so that the shell gives it back byte for byte', async () => {
    const script = `printf '%s\\0' ${WORDS.map(shellQuote).join(' ')}`;
    const { stdout } = await promisify(execFile)('/bin/sh', ['-c', script]);
    expect(stdout.split('\0').slice(0, -1)).toEqual(WORDS);
  });

  it('waits for the word of the host, then runs the wrapper as the user with no capability, its own session and no status descriptor', () => {
    const script = supervisorScript('/run/ambient-killer/c1', {
      wrapper: 'echo "$@"',
      args: ['ambient-exec', "a'b"],
      uid: 1000,
      gid: 1000,
    });
    expect(script).toContain(
      "setsid setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps=-all --bounding-set=-all -- /bin/sh -c 'echo \"$@\"' 'ambient-exec' 'a'\\''b' </dev/null >&5 2>&6 5>&- 6>&- 4>&- &",
    );
    expect(script.split('\n').slice(0, 6)).toEqual([
      "exec 7<'/run/ambient-killer/c1'/go",
      'echo a >&4',
      'read -r word <&7',
      'exec 7<&-',
      '[ "$word" = go ] || exit 0',
      "exec 5>'/run/ambient-killer/c1'/out 6>'/run/ambient-killer/c1'/err",
    ]);
    expect(script).toContain('echo "$?" >&4');
  });
});
