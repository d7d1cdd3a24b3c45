import { fileURLToPath } from 'node:url';
import { ManagedProcess, runBuildScript, servedFingerprint } from '@outrigger/control-plane';

/** A webhook server the benches run beside the injector, as its own process. */
export interface PeerOptions {
  readonly port: number;
  readonly certFile: string;
  readonly keyFile: string;
  readonly logFile: string;
  /** Node's own flags for a Node peer (e.g. --cpu-prof): command-line flags, since NODE_OPTIONS refuses many V8 ones. */
  readonly nodeArgs?: readonly string[];
}

/** Path of agnhost's sidecar-injecting mutation (the injector's is /mutate). */
export const AGNHOST_SIDECAR_PATH = '/mutating-pods-sidecar';

/** The minimal node:https webhook of baseline-server.ts, on the built admission core as the injector runs it. */
export async function startBaselineProcess(options: PeerOptions): Promise<ManagedProcess> {
  // Without the development condition it loads the built @outrigger/admission, as the injector does.
  const script = fileURLToPath(new URL('./baseline-server.ts', import.meta.url));
  const child = new ManagedProcess('baseline', process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', script, String(options.port), options.certFile, options.keyFile], options.logFile);
  return listening(child, options.port);
}

/**
 * The independent webhook of independent-webhook.ts, run by Node as the file is (types stripped, no
 * loader, none of Outrigger's code), adding what `injectionFile` says.
 */
export async function startIndependentPeer(name: string, options: PeerOptions & { readonly injectionFile: string }): Promise<ManagedProcess> {
  const script = fileURLToPath(new URL('./independent-webhook.ts', import.meta.url));
  const child = new ManagedProcess(name, process.execPath, [...(options.nodeArgs ?? []), script, String(options.port), options.certFile, options.keyFile, options.injectionFile], options.logFile);
  return listening(child, options.port);
}

export interface AgnhostOptions extends PeerOptions {
  readonly sidecarImage: string;
  /** Limits the Go scheduler to that many cores. */
  readonly gomaxprocs?: number;
  /**
   * Offer HTTP/2 (Go's default). The API server speaks it only to webhooks at a loopback URL: it pins
   * http/1.1 for Services and other URLs (kubernetes#75791), so a deployed webhook is called over HTTP/1.1.
   */
  readonly http2?: boolean;
}

/**
 * agnhost's `webhook` (tools/kube/cmd/agnhost-webhook, built from the pinned k8s.io/kubernetes module):
 * the Kubernetes e2e reference webhook. It listens on every interface (agnhost has no address flag).
 */
export async function startAgnhost(options: AgnhostOptions): Promise<ManagedProcess> {
  const dir = await runBuildScript('tools/kube/build.sh', ['agnhost-webhook'], (line) => process.stderr.write(`${line}\n`));
  const env = { ...process.env, ...(options.gomaxprocs ? { GOMAXPROCS: String(options.gomaxprocs) } : {}), ...(options.http2 ? {} : { GODEBUG: 'http2server=0' }) };
  const args = [`--port=${options.port}`, `--tls-cert-file=${options.certFile}`, `--tls-private-key-file=${options.keyFile}`, `--sidecar-image=${options.sidecarImage}`];
  const name = `agnhost${options.gomaxprocs ? `-gomaxprocs${options.gomaxprocs}` : ''}${options.http2 ? '-h2' : ''}`;
  return listening(new ManagedProcess(name, `${dir}/agnhost-webhook`, args, options.logFile, env), options.port);
}

/** Resolves once `child` completes a TLS handshake on `port`; stops it if it never does. */
async function listening(child: ManagedProcess, port: number, timeoutMs = 30_000): Promise<ManagedProcess> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!child.running) throw new Error(`${child.name} exited during startup; see ${child.logFile}`);
    if (await servedFingerprint(port).then(() => true, () => false)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  await child.stop();
  throw new Error(`${child.name} is not listening on ${port} after ${timeoutMs / 1000} s; see ${child.logFile}`);
}
