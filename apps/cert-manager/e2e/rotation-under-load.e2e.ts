import { X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { AdmissionregistrationV1Api, CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { type ManagedProcess, createTestNamespace, freePort, kubeConfigFrom, repoRoot, servedFingerprint, startApp } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

// The injector registered through the webhook configuration the cert-manager creates and keeps
// (failurePolicy Fail), serving the leaf it watches in the cert-manager's Secret (TLS_SECRET; the
// files hold only the first leaf, as a mounted Secret would until the kubelet refreshes it), while
// pods are created continuously and short lifetimes force leaf renewals and a CA rotation.
const LOAD_MS = Number(process.env.ROTATION_LOAD_MS ?? 80_000);
const CONCURRENCY = 8;
const decode = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString('utf8');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const optedIn = {
  'xxl-agent/enable': 'true',
  'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin',
  'xxl-agent/target-container': 'app',
  'xxl-agent/job-name': 'billing',
};

describe('rotation under load: injector behind the managed webhook', () => {
  const cp = inject('controlPlane');
  const dir = mkdtempSync(join(tmpdir(), 'cert-manager-load-'));
  const apps: ManagedProcess[] = [];
  let kc: KubeConfig;
  let core: CoreV1Api;
  let installNs: string;
  let workNs: string;
  let configName: string;
  let injectorPort: number;
  let syncing = true;
  let sync: Promise<void> | undefined;
  const rotations: Array<{ fingerprint: string; seenAt: number; servedAfterMs?: number; verifiedAgainstBundle?: string }> = [];

  /** A handshake as the API server makes it: the chain verified against the webhook's caBundle. */
  async function verifyAgainstBundle(): Promise<string> {
    const config = await kc.makeApiClient(AdmissionregistrationV1Api).readMutatingWebhookConfiguration({ name: configName });
    const ca = decode(config.webhooks?.[0]?.clientConfig.caBundle);
    return new Promise((done) => {
      const socket = connect({ host: '127.0.0.1', port: injectorPort, ca }, () => {
        done(socket.authorized ? 'ok' : String(socket.authorizationError));
        socket.end();
      });
      socket.setTimeout(2_000, () => socket.destroy(new Error('timeout')));
      socket.on('error', (error) => done(error.message));
    });
  }

  /** Follows the serving Secret, and measures when the injector serves each new leaf. */
  async function followSecret(): Promise<void> {
    let current = '';
    while (syncing) {
      const secret = await core.readNamespacedSecret({ namespace: installNs, name: 'outrigger-injector-tls' }).catch(() => undefined);
      const cert = decode(secret?.data?.['tls.crt']);
      if (cert && cert !== current) {
        current = cert;
        if (rotations.length === 0) {
          writeFileSync(join(dir, 'tls.key'), decode(secret?.data?.['tls.key']));
          writeFileSync(join(dir, 'tls.crt'), cert);
        }
        const rotation = { fingerprint: new X509Certificate(cert).fingerprint256, seenAt: Date.now() } as (typeof rotations)[number];
        rotations.push(rotation);
        if (injectorPort) {
          void (async () => {
            while (syncing && Date.now() - rotation.seenAt < 30_000) {
              if ((await servedFingerprint(injectorPort).catch(() => '')) === rotation.fingerprint) {
                rotation.servedAfterMs = Date.now() - rotation.seenAt;
                rotation.verifiedAgainstBundle = await verifyAgainstBundle();
                return;
              }
              await sleep(50);
            }
          })();
        }
      }
      await sleep(100);
    }
  }

  beforeAll(async () => {
    kc = kubeConfigFrom(cp.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    installNs = await createTestNamespace(kc, 'cm-load');
    workNs = await createTestNamespace(kc, 'cm-work', { 'outrigger.dev/injection': 'enabled' });
    configName = `outrigger-injector-${installNs}`;
    injectorPort = 0;
    const port = await freePort();
    const certManagerPort = await freePort();
    apps.push(
      await startApp('cert-manager', {
        env: {
          KUBECONFIG: cp.kubeconfigPath,
          PORT: String(certManagerPort),
          POD_NAMESPACE: installNs,
          POD_NAME: 'cm-load',
          REGISTER_WEBHOOK: 'true',
          WEBHOOK_CONFIGURATION_NAME: configName,
          // By name only: the per-name watch that RBAC can limit with resourceNames.
          WEBHOOK_SELECT_BY_ANNOTATION: 'false',
          WEBHOOK_URL_PORT: String(port),
          EXTRA_IP_ADDRESSES: '127.0.0.1',
          // Certificates are back-dated 5 min, which counts in their life: shorter lifetimes than
          // these would be renewed at once, every run. CA staged ~1 min in, leaves renewed every ~20 s.
          CA_LIFETIME: '4m',
          LEAF_LIFETIME: '3m',
          SETTLE: '5s',
          RECHECK: '5s',
          READY_MIN_VALIDITY: '2s',
          LEASE_DURATION: '4s',
          LEASE_RENEW_DEADLINE: '3s',
          LEASE_RETRY_PERIOD: '500ms',
        },
        readyUrl: `http://127.0.0.1:${certManagerPort}/readyz`,
        logFile: join(dir, 'cert-manager.log'),
        timeoutMs: 60_000,
      }),
    );
    sync = followSecret();
    while (rotations.length === 0) await sleep(50);
    const bundle = decode((await core.readNamespacedSecret({ namespace: installNs, name: 'outrigger-injector-tls' })).data?.['ca.crt']);
    apps.push(
      await startApp('injector', {
        env: {
          PORT: String(port),
          PROFILES_FILE: join(repoRoot(), 'deploy/base/profiles/xxl-job.yaml'),
          TLS_CERT_FILE: join(dir, 'tls.crt'),
          TLS_KEY_FILE: join(dir, 'tls.key'),
          TLS_SECRET: 'outrigger-injector-tls',
          KUBECONFIG: cp.kubeconfigPath,
          POD_NAMESPACE: installNs,
        },
        readyUrl: `https://127.0.0.1:${port}/readyz`,
        ca: bundle,
        logFile: join(dir, 'injector.log'),
      }),
    );
    injectorPort = port;
    console.log(`rotation e2e: namespaces ${installNs} ${workNs}, logs in ${dir}`);
  });

  afterAll(async () => {
    syncing = false;
    await sync;
    await Promise.all(apps.map((a) => a.stop()));
    await kc.makeApiClient(AdmissionregistrationV1Api).deleteMutatingWebhookConfiguration({ name: configName }).catch(() => undefined);
  });

  it('admits every pod, with its agent, while leaves and the CA rotate', { timeout: LOAD_MS + 120_000 }, async () => {
    let creates = 0;
    let withoutAgent = 0;
    const failures: string[] = [];
    const cas = new Set<string>();
    const started = Date.now();
    const deadline = started + LOAD_MS;
    const worker = async () => {
      while (Date.now() < deadline) {
        const body: V1Pod = { metadata: { generateName: 'load-', annotations: optedIn }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0' }] } };
        try {
          const created = await core.createNamespacedPod({ namespace: workNs, body });
          creates++;
          if (!created.spec?.containers.some((c) => c.name === 'xxl-agent')) withoutAgent++;
        } catch (error) {
          failures.push(`t+${Date.now() - started} ms: ${String((error as { body?: string }).body ?? error).slice(0, 300)}`);
        }
      }
    };
    const caWatch = (async () => {
      while (Date.now() < deadline) {
        const ca = await core.readNamespacedSecret({ namespace: installNs, name: 'outrigger-webhook-ca' }).catch(() => undefined);
        if (ca?.data?.['ca.crt']) cas.add(new X509Certificate(decode(ca.data['ca.crt'])).fingerprint256);
        await sleep(500);
      }
    })();
    // Halfway through, someone deletes the serving Secret: it is recreated, and no create fails.
    const deletion = (async () => {
      await sleep(LOAD_MS / 2 - 5_000);
      const before = await core.readNamespacedSecret({ namespace: installNs, name: 'outrigger-injector-tls' });
      const deletedAt = Date.now();
      await core.deleteNamespacedSecret({ namespace: installNs, name: 'outrigger-injector-tls' });
      while (Date.now() < deadline) {
        const after = await core.readNamespacedSecret({ namespace: installNs, name: 'outrigger-injector-tls' }).catch(() => undefined);
        if (after && after.metadata?.uid !== before.metadata?.uid) return Date.now() - deletedAt;
        await sleep(100);
      }
      return undefined;
    })();
    const [recreatedAfterMs] = await Promise.all([deletion, ...Array.from({ length: CONCURRENCY }, worker), caWatch]);
    const seconds = (Date.now() - started) / 1000;
    const settled = Date.now() + 10_000;
    while (rotations.slice(1).some((r) => r.verifiedAgainstBundle === undefined) && Date.now() < settled) await sleep(100);
    const served = rotations.slice(1).map((r) => r.servedAfterMs);
    const verifications = rotations.slice(1).map((r) => r.verifiedAgainstBundle);
    console.log(
      `rotation under load: ${creates} creates (${(creates / seconds).toFixed(1)}/s), ${failures.length} failures, ${withoutAgent} without agent; ` +
        `${rotations.length - 1} leaf rotations, ${cas.size} signing CAs seen; injector served each new leaf after (ms, from the Secret change): ${JSON.stringify(served)}; ` +
        `handshakes verified against the webhook's caBundle: ${JSON.stringify(verifications)}`,
    );
    if (failures.length > 0) console.log(`first failures: ${failures.slice(0, 3).join(' | ')}; last: ${failures.at(-1)}`);
    console.log(`leaf changes at (ms after the load started): ${JSON.stringify(rotations.map((r) => r.seenAt - started))}`);
    console.log(`serving Secret deleted at t+${LOAD_MS / 2 - 5_000} ms, recreated after ${recreatedAfterMs} ms`);
    expect(recreatedAfterMs).toBeDefined();
    expect(rotations.length).toBeGreaterThan(1);
    expect(cas.size).toBeGreaterThan(1);
    // Every leaf was served (this also bounds pickup: 30 s, against the kubelet's 30–100 s)...
    expect(served.every((ms) => ms !== undefined)).toBe(true);
    // ...and the API server's trust (the caBundle) already covered it.
    expect(verifications.every((v) => v === 'ok')).toBe(true);
    expect(failures).toEqual([]);
    expect(withoutAgent).toBe(0);
  });
});
