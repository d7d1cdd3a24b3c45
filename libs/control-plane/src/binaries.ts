import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CONTROL_PLANE_BINARIES = ['kube-apiserver', 'etcd', 'kubectl'] as const;
export const NODE_BINARIES = ['kubelet', 'kube-scheduler', 'kube-controller-manager', 'kube-proxy'] as const;

type Log = (line: string) => void;
const stderrLog: Log = (l) => process.stderr.write(`${l}\n`);

/**
 * The Kubernetes binaries, from OUTRIGGER_KUBE_BIN or KUBEBUILDER_ASSETS (control plane only), else
 * built from the Go modules pinned in tools/kube.
 */
export async function resolveBinaries(log: Log = stderrLog, names: readonly string[] = CONTROL_PLANE_BINARIES): Promise<string> {
  const variables = names.every((n) => (CONTROL_PLANE_BINARIES as readonly string[]).includes(n)) ? ['OUTRIGGER_KUBE_BIN', 'KUBEBUILDER_ASSETS'] : ['OUTRIGGER_KUBE_BIN'];
  for (const variable of variables) {
    const dir = process.env[variable];
    if (dir) return checkedDir(variable, dir, names.filter((b) => b !== 'kubectl'));
  }
  return runBuildScript('tools/kube/build.sh', names, log);
}

/** The oldest kube-apiserver the install supports (MINIMUM_KUBERNETES), built from the Go modules pinned in tools/kube/floor. */
export async function floorApiServer(log: Log = stderrLog): Promise<string> {
  return join(await runBuildScript('tools/kube/build.sh', ['floor'], log), 'kube-apiserver');
}

/** A directory of binaries: from `variable` if set (checked), else what `script` builds and prints. */
export async function resolveToolDir(variable: string, script: string, names: readonly string[], log: Log = stderrLog): Promise<string> {
  const dir = process.env[variable];
  return dir ? checkedDir(variable, dir, names) : runBuildScript(script, [], log);
}

function checkedDir(variable: string, dir: string, names: readonly string[]): string {
  const missing = names.filter((b) => !existsSync(join(dir, b)));
  if (missing.length > 0) throw new Error(`${variable}=${dir} has no ${missing.join(', ')}`);
  return dir;
}

/** Runs one of the repository's build scripts; its last stdout line is the directory it built into. */
export function runBuildScript(script: string, args: readonly string[], log: Log = stderrLog): Promise<string> {
  return runScript(script, args, log).then((out) => out.trim().split('\n').at(-1) ?? '');
}

/** Runs a repository script with progress (stderr) sent to `log`; resolves with its stdout. */
export function runScript(script: string, args: readonly string[], log: Log = stderrLog): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn('bash', [join(repoRoot(), script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => chunk.toString().split('\n').filter(Boolean).forEach(log));
    child.on('error', fail);
    // 'close', not 'exit': only then has all of its stdout been read (under load 'exit' can come first).
    child.on('close', (code) => (code === 0 ? done(out) : fail(new Error(`${script} failed with exit code ${code}; see its output above`))));
  });
}

/** The repository root, found from this file whether it runs from src/ or dist/. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'tools', 'kube', 'build.sh'))) {
    const parent = resolve(dir, '..');
    if (parent === dir) throw new Error('cannot find tools/kube/build.sh above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}
