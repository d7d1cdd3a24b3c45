import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const HOLDER = join(import.meta.dirname, 'testing/hold-bench-lock.ts');
const started: ChildProcess[] = [];
const dirs: string[] = [];

function bench(lock: string): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, lock], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return { child, out: () => out, err: () => err };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
const free = (lock: string) => spawnSync('flock', ['--nonblock', lock, 'true']).status === 0;

afterEach(async () => {
  for (const child of started.splice(0)) {
    child.kill('SIGKILL');
    await exited(child);
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function lockPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'outrigger-bench-lock-'));
  dirs.push(dir);
  return join(dir, 'bench.lock');
}

describe('holdBenchLock', () => {
  it('makes a second bench wait, saying so, until the first one ends however it ends', async () => {
    const lock = lockPath();
    const first = bench(lock);
    await until(() => first.out().includes('locked'), 'the first bench to take the lock');
    expect(free(lock)).toBe(false);

    const second = bench(lock);
    await until(() => second.err().includes(`waiting for another bench to finish: it holds ${lock}`), 'the second bench to say it waits');
    expect(second.out()).toBe('');

    first.child.kill('SIGKILL');
    await until(() => second.out().includes('locked'), 'the second bench to take the lock');
    second.child.kill('SIGKILL');
    await exited(second.child);
    expect(free(lock)).toBe(true);
  });
});
