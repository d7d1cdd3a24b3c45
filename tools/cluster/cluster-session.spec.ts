import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hangupLog } from './cluster-session.ts';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'stopped-by-signal.ts');

/** Starts the fixture, waits for it to be up, sends `signal` (after closing its output, for a hangup) and returns its exit code and log. */
async function stopWith(signal: NodeJS.Signals, mode = ''): Promise<{ code: number | null; log: string | undefined }> {
  const log = hangupLog(join(mkdtempSync(join(tmpdir(), 'cluster-session-')), 'kubeconfig'));
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, log, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  await new Promise<void>((ready) => child.stdout.on('data', (c: Buffer) => c.toString().includes('ready') && ready()));
  if (signal === 'SIGHUP') {
    child.stdout.destroy();
    child.stderr.destroy();
  }
  child.kill(signal);
  const code = await exited;
  return { code, log: existsSync(log) ? readFileSync(log, 'utf8') : undefined };
}

describe('stopOnSignals', () => {
  it('after a hangup, stops and says so in the hangup log, not only to the closed terminal', async () => {
    const { code, log } = await stopWith('SIGHUP');
    expect(code).toBe(0);
    expect(log).toMatch(/^\S+ pid \d+: SIGHUP \(the terminal closed\)\n\nstopping the cluster and removing everything it created\nstopped; nothing left behind\n$/);
  });

  it('after a hangup whose stop fails, exits 1 and the log names what is left', async () => {
    const { code, log } = await stopWith('SIGHUP', 'fail');
    expect(code).toBe(1);
    expect(log).toContain('still left: a deliberate leftover (stopped on SIGHUP)');
  });

  it('writes no log when the terminal is still there (Ctrl-C)', async () => {
    expect(await stopWith('SIGINT')).toEqual({ code: 0, log: undefined });
  });
});
