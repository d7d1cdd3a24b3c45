import { execFile, execFileSync } from 'node:child_process';

/** Runs a host command (ip, iptables, mount…) and returns its stdout; the error names the command and says what it printed. */
export function host(command: string, args: readonly string[], input?: string): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${(e.stderr || e.stdout || e.message).trim()}`, { cause: error });
  }
}

/** Like host(), for undo steps: false when the command failed (the thing was already gone). */
export function tryHost(command: string, args: readonly string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** host() without blocking the event loop. */
export function hostAsync(command: string, args: readonly string[]): Promise<string> {
  return new Promise((done, fail) =>
    execFile(command, args, { encoding: 'utf8' }, (error, stdout, stderr) =>
      error ? fail(new Error(`${command} ${args.join(' ')} failed: ${(stderr || stdout || error.message).trim()}`, { cause: error })) : done(stdout),
    ),
  );
}
