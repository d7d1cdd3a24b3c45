import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** kubectl against a suite's API server, for the tools e2e suites. */
export interface SuiteKubectl {
  /** Its stdout; a failure throws with kubectl's own output. */
  readonly kubectl: (args: readonly string[], input?: string) => string;
  /** `kubectl get … -o json` parsed, or undefined when it fails (e.g. not found yet). */
  readonly getJson: (args: readonly string[]) => any; // eslint-disable-line @typescript-eslint/no-explicit-any -- API objects, read field by field
  /** Resolves once each CRD named is Established (`kubectl wait` right after an apply may answer NotFound from a lagging cache). */
  readonly established: (crds: readonly string[]) => Promise<void>;
}

export function suiteKubectl(kubeconfigPath: string, binDir: string): SuiteKubectl {
  const bin = join(binDir, 'kubectl');
  const kubectl = (args: readonly string[], input?: string): string => {
    try {
      // The API server's /metrics outgrows execFileSync's 1 MiB default.
      return execFileSync(bin, ['--kubeconfig', kubeconfigPath, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
    } catch (error) {
      const e = error as { stderr?: string; stdout?: string; message: string };
      throw new Error(`kubectl ${args.join(' ')} failed:\n${e.stderr ?? ''}${e.stdout ?? ''}${e.message}`);
    }
  };
  const getJson = (args: readonly string[]) => {
    try {
      return JSON.parse(kubectl(['get', ...args, '-o', 'json']));
    } catch {
      return undefined;
    }
  };
  const established = async (crds: readonly string[]) => {
    for (const crd of crds) {
      await poll(`CRD ${crd} Established`, () => ((getJson(['customresourcedefinitions', crd])?.status?.conditions ?? []) as { type: string; status: string }[]).some((c) => c.type === 'Established' && c.status === 'True') || undefined, 60_000);
    }
  };
  return { kubectl, getJson, established };
}

/**
 * Polls `probe` every 250 ms until it returns a value; a probe that throws has not succeeded yet.
 * Tests wait for states, never for fixed times; a timeout names what it waited for and the last error.
 */
export async function poll<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError instanceof Error ? `; last error: ${lastError.message}` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
