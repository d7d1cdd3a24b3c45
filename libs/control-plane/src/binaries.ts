import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CONTROL_PLANE_BINARIES = ['kube-apiserver', 'etcd', 'kubectl'] as const;

/** Where the binaries come from, in order: OUTRIGGER_KUBE_BIN, KUBEBUILDER_ASSETS, else built from Go modules. */
export async function resolveBinaries(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<string> {
  for (const variable of ['OUTRIGGER_KUBE_BIN', 'KUBEBUILDER_ASSETS'] as const) {
    const dir = process.env[variable];
    if (!dir) continue;
    const missing = CONTROL_PLANE_BINARIES.filter((b) => b !== 'kubectl' && !existsSync(join(dir, b)));
    if (missing.length > 0) throw new Error(`${variable}=${dir} has no ${missing.join(', ')}`);
    return dir;
  }
  return buildFromGoModules(log);
}

function buildFromGoModules(log: (line: string) => void): Promise<string> {
  const script = join(repoRoot(), 'tools', 'kube', 'build.sh');
  return new Promise((done, fail) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => chunk.toString().split('\n').filter(Boolean).forEach(log));
    child.on('error', fail);
    child.on('exit', (code) =>
      code === 0 ? done(out.trim().split('\n').at(-1) ?? '') : fail(new Error(`tools/kube/build.sh failed with exit code ${code}; see its output above`)),
    );
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
