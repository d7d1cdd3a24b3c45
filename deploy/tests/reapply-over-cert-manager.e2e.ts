import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startApp, type ManagedProcess, DEPLOY_DIR, INSTALL_NAMESPACE, render, poll, suiteKubectl } from '@outrigger/control-plane';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { removeOverlay } from './remove-overlay.ts';

/**
 * Re-applying an overlay over the MutatingWebhookConfiguration as the real cert-manager
 * (dist/apps/cert-manager) leaves it: as shipped (it JSON-patches caBundle into the applied
 * configuration) or registered by itself (REGISTER_WEBHOOK=true, in service or url mode, a POST
 * as field manager outrigger-cert-manager). Both apply modes deploy/README.md names must work and
 * keep the caBundle.
 */
const { kubeconfigPath, binDir } = inject('controlPlane');
const kubectlBin = join(binDir, 'kubectl');
const { kubectl, getJson, established } = suiteKubectl(kubeconfigPath, binDir);
const ns = INSTALL_NAMESPACE;
const OVERLAY = join(DEPLOY_DIR, 'overlays/prod');
const dir = mkdtempSync(join(tmpdir(), 'outrigger-reapply-e2e-'));
let cm: ManagedProcess | undefined;

interface LiveWebhook {
  readonly failurePolicy: string;
  readonly clientConfig: { url?: string; service?: unknown; caBundle?: string };
}

function liveWebhook(): LiveWebhook | undefined {
  return getJson(['mutatingwebhookconfiguration', 'outrigger-injector'])?.webhooks?.[0];
}

/** The cert-manager with the shipped Deployment's settings, plus `env`. */
async function startCertManager(env: Record<string, string>): Promise<void> {
  const deployment = render(kubectlBin, 'base/cert-manager').find((o) => o.kind === 'Deployment') as unknown as {
    spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
  };
  const shipped = deployment.spec.template.spec.containers.flatMap((c) => c.env).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]]));
  const port = await freePort();
  cm = await startApp('cert-manager', {
    env: {
      ...Object.fromEntries(shipped),
      ...env,
      PORT: String(port),
      POD_NAMESPACE: ns,
      POD_NAME: 'cert-manager-reapply-e2e',
      KUBECONFIG: kubeconfigPath,
      // A stopped instance's Lease must not delay the next case for long.
      LEASE_DURATION: '4s',
    },
    readyUrl: `http://127.0.0.1:${port}/readyz`,
    logFile: join(dir, 'cert-manager.log'),
    timeoutMs: 60_000,
  });
}

const APPLY = {
  'kubectl apply -k': ['apply', '-k', OVERLAY],
  'kubectl apply --server-side --force-conflicts -k': ['apply', '--server-side', '--force-conflicts', '-k', OVERLAY],
} as const;

const CASES = [
  // What the overlays run: the applied configuration gets its caBundle by JSON patch.
  { state: 'as shipped (caBundle patched in)', registers: false, env: {} },
  { state: 'registered in service mode (REGISTER_WEBHOOK=true)', registers: true, env: { REGISTER_WEBHOOK: 'true' } },
  // Local runs: the API server calls https://127.0.0.1:<port>/mutate.
  { state: 'registered in url mode (REGISTER_WEBHOOK=true, WEBHOOK_URL_PORT)', registers: true, env: { REGISTER_WEBHOOK: 'true', WEBHOOK_URL_PORT: '9443' } },
] as const;

beforeAll(async () => {
  // The overlays hold an AgentProfile: its CRD goes first, as the README's install steps say.
  kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/crd')]);
  await established(['agentprofiles.outrigger.dev']);
});

afterEach(async () => {
  await cm?.stop();
  cm = undefined;
});

afterAll(() => {
  // Leave no webhook (it would call an injector that is not there) and no cert-manager state for later suites.
  removeOverlay(kubectlBin, kubeconfigPath, 'overlays/prod');
  kubectl(['delete', '--ignore-not-found', '-n', ns, 'secret', 'outrigger-webhook-ca', 'outrigger-injector-tls']);
  kubectl(['delete', '--ignore-not-found', '-n', ns, 'lease', 'outrigger-cert-manager']);
});

describe.each(Object.entries(APPLY))('%s over the webhook configuration the cert-manager left', (_mode, apply) => {
  it.each(CASES)('$state', async ({ registers, env }) => {
    // Each case from a fresh configuration, whatever the last one left.
    kubectl(['delete', '--ignore-not-found', 'mutatingwebhookconfiguration', 'outrigger-injector']);
    kubectl(apply);
    // Registration happens only when the configuration is missing.
    if (registers) kubectl(['delete', 'mutatingwebhookconfiguration', 'outrigger-injector']);
    await startCertManager(env);
    const before = await poll('the caBundle', () => {
      const webhook = liveWebhook();
      return webhook?.clientConfig.caBundle ? webhook : undefined;
    });
    if ('WEBHOOK_URL_PORT' in env) expect(before.clientConfig.url).toBe('https://127.0.0.1:9443/mutate');

    kubectl(apply);

    const after = liveWebhook();
    expect(after?.clientConfig).toEqual({
      service: { namespace: ns, name: 'outrigger-injector', path: '/mutate', port: 443 },
      caBundle: before.clientConfig.caBundle,
    });
    expect(after?.failurePolicy).toBe('Fail');
  });
});

it('without --force-conflicts, server-side apply over a url-mode registration stops at a conflict naming the field and its manager', async () => {
  kubectl(['delete', '--ignore-not-found', 'mutatingwebhookconfiguration', 'outrigger-injector']);
  await startCertManager({ REGISTER_WEBHOOK: 'true', WEBHOOK_URL_PORT: '9443' });
  await poll('the registration', () => liveWebhook()?.clientConfig.caBundle);
  expect(() => kubectl(['apply', '--server-side', '-k', OVERLAY])).toThrow(/conflict with "outrigger-cert-manager".*clientConfig\.url/);
  expect(liveWebhook()?.clientConfig.url).toBe('https://127.0.0.1:9443/mutate');
});
