import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ManagedProcess, processAlive as alive } from './managed-process.js';


async function waitUntil(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('ManagedProcess', () => {
  it('counts a zombie as not alive, though kill(pid, 0) still finds it', async () => {
    // The short sleep exits after its parent has exec'd the long one, which never reaps it: a zombie.
    const log = join(mkdtempSync(join(tmpdir(), 'mp-')), 'log');
    const p = new ManagedProcess('sh', 'sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 30'], log);
    await waitUntil(() => /^\d+$/m.test(readFileSync(log, 'utf8')), 'the zombie pid');
    const zombie = Number(readFileSync(log, 'utf8').trim());
    await waitUntil(() => !alive(zombie), 'the zombie state');
    expect(() => process.kill(zombie, 0)).not.toThrow();
    expect(alive(p.pid)).toBe(true);
    await p.stop();
  });

  it('logs to its file and stops by PID', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mp-'));
    const p = new ManagedProcess('sh', 'sh', ['-c', 'echo started; exec sleep 60'], join(dir, 'log'));
    await waitUntil(() => readFileSync(join(dir, 'log'), 'utf8').includes('started'), 'output');
    await p.stop();
    expect(p.running).toBe(false);
    expect(alive(p.pid)).toBe(false);
  });

  it('leaves no orphan when its owner is killed with SIGKILL', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mp-'));
    const module = fileURLToPath(new URL('./managed-process.ts', import.meta.url));
    const owner = `
      const { ManagedProcess } = await import(${JSON.stringify(module)});
      const p = new ManagedProcess('sleep', 'sleep', ['60'], ${JSON.stringify(join(dir, 'log'))});
      // Not console.log: under FORCE_COLOR (set by Nx) it colours numbers.
      process.stdout.write(p.pid + '\\n');
      setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', owner], { stdio: ['ignore', 'pipe', 'inherit'] });
    const childPid = await new Promise<number>((done) => parent.stdout.once('data', (d: Buffer) => done(Number(d.toString().trim()))));
    expect(alive(childPid)).toBe(true);
    parent.kill('SIGKILL');
    await waitUntil(() => !alive(childPid), 'the watchdog to kill the orphan');
  });
});
