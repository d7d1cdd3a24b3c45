import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { clusterDir, clusterLeftovers, clusterReapers, repoRoot } from '@outrigger/control-plane';
import { afterEach, describe, expect, it } from 'vitest';

// `npm run cluster` as a user runs it, stopped every way it can stop: nothing of it may stay on the host.
const CLUSTER_TS = join(repoRoot(), 'tools', 'cluster', 'cluster.ts');

interface Run {
  readonly child: ChildProcess;
  readonly kubeconfig: string;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

function startClusterCommand(env: NodeJS.ProcessEnv = {}): Run {
  const kubeconfig = join(mkdtempSync(join(tmpdir(), 'cluster-teardown-')), 'kubeconfig');
  // Its own process group, as a terminal gives a foreground command: Ctrl-C reaches every process in it.
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions', 'development', CLUSTER_TS, '--no-install', '--kubeconfig', kubeconfig], {
    cwd: repoRoot(),
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const run = { child, kubeconfig, output: () => output, exited };
  started.push(run);
  return run;
}

const started: Run[] = [];

// A test that failed before stopping its cluster leaves the command running: stop it as Ctrl-C would
// (its whole process group, a build included), or kill the group, so the next test starts on a clean host.
afterEach(async () => {
  for (const run of started.splice(0)) {
    if (run.child.exitCode !== null || run.child.signalCode !== null) continue;
    process.kill(-(run.child.pid ?? 0), 'SIGINT');
    const stopped = await Promise.race([run.exited.then(() => true), new Promise<boolean>((done) => setTimeout(() => done(false), 45_000))]);
    if (!stopped) process.kill(-(run.child.pid ?? 0), 'SIGKILL');
  }
});

async function untilReady(run: Run, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!/one node, ready/.test(run.output())) {
    if (run.child.exitCode !== null) throw new Error(`the cluster command exited with ${run.child.exitCode}:\n${run.output()}`);
    if (Date.now() > deadline) throw new Error(`the cluster was not ready after ${timeoutMs / 1000}s:\n${run.output()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe('the local cluster leaves nothing behind', () => {
  const dir = clusterDir();

  it('after Ctrl-C', async () => {
    const run = startClusterCommand();
    await untilReady(run);
    expect(clusterLeftovers(dir).length).toBeGreaterThan(0);
    process.kill(-(run.child.pid ?? 0), 'SIGINT');
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain('nothing left behind');
    expect(clusterLeftovers(dir)).toEqual([]);
  });

  it('after its terminal closes (SIGHUP to its process group, its output gone)', async () => {
    const run = startClusterCommand();
    await untilReady(run);
    // A closed terminal: writes to it fail from now on, and its shell sends SIGHUP to the foreground job.
    run.child.stdout?.destroy();
    run.child.stderr?.destroy();
    process.kill(-(run.child.pid ?? 0), 'SIGHUP');
    const code = await run.exited;
    // Nobody read the terminal: how the stop went is in the log beside the kubeconfig.
    const log = readFileSync(join(dirname(run.kubeconfig), 'hangup.log'), 'utf8');
    expect({ code, log }).toEqual({ code: 0, log: expect.stringMatching(/SIGHUP[\s\S]*stopped; nothing left behind/) });
    expect(clusterLeftovers(dir)).toEqual([]);
  });

  it('after a failed start (containerd exits at once)', async () => {
    const broken = mkdtempSync(join(tmpdir(), 'broken-containerd-'));
    for (const name of ['containerd', 'containerd-shim-runc-v2', 'ctr']) {
      writeFileSync(join(broken, name), '#!/bin/sh\necho "containerd: deliberately broken for a test" >&2\nexit 1\n');
      chmodSync(join(broken, name), 0o755);
    }
    const run = startClusterCommand({ OUTRIGGER_CONTAINERD_BIN: broken });
    expect(await run.exited).toBe(1);
    expect(run.output()).toMatch(/containerd exited/);
    expect(clusterLeftovers(dir)).toEqual([]);
  });

  it('after its owner is killed with SIGKILL: its reaper removes everything, unasked', async () => {
    const run = startClusterCommand();
    await untilReady(run);
    expect(clusterReapers()).toHaveLength(1);
    run.child.kill('SIGKILL');
    await run.exited;
    await until(() => clusterLeftovers(dir).length === 0 && !existsSync(`${dir}.pid`) && clusterReapers().length === 0, 'the reaper to remove the cluster');
    expect(run.output()).toContain('nothing of the cluster is left');
  });

  it('after its owner and its reaper are both killed: --teardown removes what they left', async () => {
    const run = startClusterCommand();
    await untilReady(run);
    for (const reaper of clusterReapers()) process.kill(reaper, 'SIGKILL');
    run.child.kill('SIGKILL');
    await run.exited;
    expect(clusterLeftovers(dir).length).toBeGreaterThan(0);
    const teardown = spawn(process.execPath, ['--import', 'tsx', '--conditions', 'development', CLUSTER_TS, '--teardown'], { cwd: repoRoot(), stdio: 'inherit' });
    expect(await new Promise((done) => teardown.once('exit', done))).toBe(0);
    expect(clusterLeftovers(dir)).toEqual([]);
  });
});

async function until(condition: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}; left: ${clusterLeftovers(clusterDir()).join('; ')}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
