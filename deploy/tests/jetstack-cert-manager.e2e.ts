import { X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ManagedProcess, runBuildScript, servedFingerprint, startApp, DEPLOY_DIR, INSTALL_NAMESPACE, poll, suiteKubectl } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { removeOverlay } from './remove-overlay.ts';

/**
 * deploy/overlays/prod-jetstack on a real kube-apiserver with Jetstack cert-manager's CRDs and
 * controllers, both from the Go module pinned in deploy/tests/jetstack/go.mod: the server-side dry
 * run passes; Jetstack's controllers issue the injector's serving certificate into
 * outrigger-injector-tls, its cainjector puts the CA into the webhook's caBundle, and the real
 * injector serves that leaf, verified with that caBundle for the name the API server dials.
 */
const { kubeconfigPath, binDir } = inject('controlPlane');
const kubectlBin = join(binDir, 'kubectl');
const { kubectl, getJson, established } = suiteKubectl(kubeconfigPath, binDir);
const ns = INSTALL_NAMESPACE;
const OVERLAY = join(DEPLOY_DIR, 'overlays/prod-jetstack');
const dir = mkdtempSync(join(tmpdir(), 'outrigger-jetstack-e2e-'));
const processes: ManagedProcess[] = [];
let jetstackBin: string;

const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

beforeAll(async () => {
  // Jetstack's CRDs and, for the second test, its controllers (compiled once: 3.5 min cold on two busy cores).
  const crds = await runBuildScript('deploy/tests/jetstack/build.sh', ['crds']);
  jetstackBin = await runBuildScript('deploy/tests/jetstack/build.sh', []);
  kubectl(['apply', '--server-side', '-f', crds]);
  await established(['certificates.cert-manager.io', 'issuers.cert-manager.io']);
  // A dry run creates nothing: the namespace and the AgentProfile CRD exist first, as on an upgrade.
  kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/namespace')]);
  kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/crd')]);
  await established(['agentprofiles.outrigger.dev']);
}, 900_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  // No webhook left calling an injector that is not there, and no Jetstack Secrets where later suites run Outrigger's cert-manager.
  removeOverlay(kubectlBin, kubeconfigPath, 'overlays/prod-jetstack');
  kubectl(['delete', '--ignore-not-found', '-n', ns, 'secret', 'outrigger-injector-ca', 'outrigger-injector-tls']);
});

describe('overlays/prod-jetstack with Jetstack cert-manager', () => {
  it('kubectl apply --server-side --dry-run=server -k deploy/overlays/prod-jetstack', () => {
    // The field manager of the other suites on this API server (manifests.e2e.ts), so objects they left do not conflict.
    const out = kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=outrigger-deploy-test', '-k', OVERLAY]);
    expect(out).toMatch(/certificate\.cert-manager\.io\/outrigger-injector serverside-applied/);
    expect(out).toMatch(/issuer\.cert-manager\.io\/outrigger-injector-ca serverside-applied/);
  });

  it('Jetstack issues outrigger-injector-tls, cainjector keeps the caBundle, and the injector serves that leaf, trusted through the caBundle', async () => {
    // A fresh configuration: cainjector merges into a caBundle an earlier suite may have left.
    kubectl(['delete', '--ignore-not-found', 'mutatingwebhookconfiguration', 'outrigger-injector']);
    kubectl(['apply', '--server-side', '--force-conflicts', '-k', OVERLAY]);
    for (const name of ['jetstack-controller', 'jetstack-cainjector']) {
      processes.push(new ManagedProcess(name, join(jetstackBin, name), ['--kubeconfig', kubeconfigPath], join(dir, `${name}.log`)));
    }
    // Issued by Jetstack (an earlier suite may have left Outrigger's Secret of the same name).
    await poll(
      `Certificate outrigger-injector Ready (logs in ${dir})`,
      () => (getJson(['certificates.cert-manager.io', 'outrigger-injector', '-n', ns])?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True') ? true : undefined),
      60_000,
    );
    const secret = getJson(['secret', 'outrigger-injector-tls', '-n', ns]);
    expect(secret.metadata.annotations['cert-manager.io/certificate-name']).toBe('outrigger-injector');
    const caBundle = await poll(
      `the caBundle (logs in ${dir})`,
      () => {
        const bundle = getJson(['mutatingwebhookconfiguration', 'outrigger-injector'])?.webhooks?.[0]?.clientConfig?.caBundle as string | undefined;
        return bundle && decode(bundle) === decode(secret.data['ca.crt']) ? bundle : undefined;
      },
      60_000,
    );

    const leaf = new X509Certificate(decode(secret.data['tls.crt']));
    const ca = new X509Certificate(decode(caBundle));
    const serviceName = `outrigger-injector.${ns}.svc`;
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkHost(serviceName)).toBe(serviceName);
    expect(ca.ca).toBe(true);

    // The injector as deployed: the mounted files (written here as the kubelet would) and the Secret watched by name.
    writeFileSync(join(dir, 'tls.crt'), decode(secret.data['tls.crt']));
    writeFileSync(join(dir, 'tls.key'), decode(secret.data['tls.key']));
    const port = await freePort();
    processes.push(
      await startApp('injector', {
        env: { PORT: String(port), POD_NAMESPACE: ns, TLS_CERT_FILE: join(dir, 'tls.crt'), TLS_KEY_FILE: join(dir, 'tls.key'), TLS_SECRET: 'outrigger-injector-tls', KUBECONFIG: kubeconfigPath },
        // Ready only once a TLS handshake verifies against the webhook's caBundle for the Service's name.
        readyUrl: `https://127.0.0.1:${port}/readyz`,
        ca: decode(caBundle),
        servername: serviceName,
        logFile: join(dir, 'injector.log'),
      }),
    );
    expect(await servedFingerprint(port)).toBe(leaf.fingerprint256);

    // Upgrades re-apply the overlay: cainjector's caBundle (its own field, not in the manifests) stays.
    for (const apply of [['apply'], ['apply', '--server-side', '--force-conflicts']]) {
      kubectl([...apply, '-k', OVERLAY]);
      expect(getJson(['mutatingwebhookconfiguration', 'outrigger-injector']).webhooks[0].clientConfig.caBundle).toBe(caBundle);
    }
  });
});
