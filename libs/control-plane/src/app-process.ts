import { existsSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { repoRoot } from './binaries.js';
import { ManagedProcess } from './managed-process.js';

export type AppName = 'injector' | 'rbac-syncer' | 'cert-manager';

export interface AppOptions {
  readonly env: Record<string, string>;
  /** Polled until it answers 200: e.g. https://127.0.0.1:8443/readyz */
  readonly readyUrl: string;
  /** CA to trust for an https readyUrl. */
  readonly ca?: string;
  /** Name the certificate must carry, if not the URL's host (e.g. the Service DNS name). */
  readonly servername?: string;
  readonly logFile: string;
  readonly timeoutMs?: number;
  /** Runs the app through this command line instead (e.g. joining a cgroup first); it must exec the app, so the PID stays. */
  readonly wrap?: (argv: readonly string[]) => readonly string[];
  /** The checkout whose build runs (a bench's baseline from another commit); this repository by default. */
  readonly root?: string;
}

/** Runs a built app (`node dist/apps/<name>/main.js`, as in production) and waits until it is ready. */
export async function startApp(name: AppName, options: AppOptions): Promise<ManagedProcess> {
  const main = join(options.root ?? repoRoot(), 'dist', 'apps', name, 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: build it first (npx nx run ${name}:build)`);
  const [command = process.execPath, ...args] = options.wrap ? options.wrap([process.execPath, main]) : [process.execPath, main];
  const child = new ManagedProcess(name, command, args, options.logFile, { ...process.env, LOG_FORMAT: 'text', ...options.env });
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let last = '';
  while (Date.now() < deadline) {
    if (!child.running) throw new Error(`${name} exited during startup; see ${options.logFile}`);
    last = await probe(options.readyUrl, options.ca, options.servername).catch((e: Error) => e.message);
    if (last === 'ok') return child;
    await new Promise((r) => setTimeout(r, 200));
  }
  await child.stop();
  throw new Error(`${name} not ready at ${options.readyUrl}: ${last}; see ${options.logFile}`);
}

function probe(url: string, ca?: string, servername?: string): Promise<string> {
  return new Promise((done, fail) => {
    const onResponse = (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => done(res.statusCode === 200 ? 'ok' : `HTTP ${res.statusCode}`));
    };
    const req = url.startsWith('https:') ? httpsRequest(url, { ca, servername, timeout: 2_000 }, onResponse) : httpRequest(url, { timeout: 2_000 }, onResponse);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', fail);
    req.end();
  });
}
