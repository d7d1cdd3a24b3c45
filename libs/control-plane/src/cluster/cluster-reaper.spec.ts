import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processAlive } from '../managed-process.js';
import { clusterReapers, reaperStep, startReaper } from './cluster-reaper.js';

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('reaperStep', () => {
  it('waits while the owner lives, reaps once it is gone, and leaves when the pid file names anyone else', () => {
    expect(reaperStep(10, 10, true)).toBe('wait');
    expect(reaperStep(10, 10, false)).toBe('reap');
    for (const alive of [true, false]) {
      expect(reaperStep(10, undefined, alive)).toBe('leave');
      expect(reaperStep(10, 11, alive)).toBe('leave');
    }
  });
});

// The reaping itself removes a real cluster: e2e/cluster/teardown.e2e.ts kills an owner and finds nothing left.
describe('startReaper', () => {
  it('starts a reaper that clusterReapers finds, keeps its target off its command line, and leaves once its owner stopped the cluster', { timeout: 30_000 }, async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'reaper-')), 'cluster');
    const owner = spawn('sleep', ['60'], { stdio: 'ignore' });
    const ownerPid = owner.pid ?? 0;
    writeFileSync(`${dir}.pid`, String(ownerPid));
    const before = new Set(clusterReapers());
    try {
      startReaper({ owner: ownerPid, dir, binDir: tmpdir() });
      let reaper = 0;
      await waitUntil(() => (reaper = clusterReapers().find((pid) => !before.has(pid)) ?? 0) > 0, 'the reaper');
      // Not on its command line: clusterProcesses(dir) would take it for part of the cluster.
      expect(readFileSync(`/proc/${reaper}/cmdline`, 'utf8')).not.toContain(dir);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(processAlive(reaper)).toBe(true);
      rmSync(`${dir}.pid`);
      await waitUntil(() => !processAlive(reaper), 'the reaper to leave');
      expect(processAlive(ownerPid)).toBe(true);
    } finally {
      owner.kill('SIGKILL');
    }
  });
});

