import type { EventRecorder, KubeClient } from '@outrigger/kube';
import { Registry } from 'prom-client';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { CertManagerConfig } from '../config/cert-manager.config.js';
import { CertManagerMetrics } from '../metrics/cert-manager.metrics.js';
import { resolveRotationConfig } from '../rotation/index.js';
import * as cluster from './secret-and-webhook-io.js';
import { type Observation, RotationReconciler } from './rotation-reconciler.js';

vi.mock('./secret-and-webhook-io.js', async (original) => ({
  ...(await original<typeof import('./secret-and-webhook-io.js')>()),
  writeSecret: vi.fn(),
  patchCaBundle: vi.fn(),
  createWebhookConfiguration: vi.fn(),
}));

const config = {
  namespace: 'outrigger-system',
  caSecretName: 'outrigger-webhook-ca',
  servingSecretName: 'outrigger-injector-tls',
  rotation: resolveRotationConfig({ serviceName: 'outrigger-injector', namespace: 'outrigger-system' }),
  webhooks: { names: [], selectByAnnotation: true, register: undefined },
} as unknown as CertManagerConfig;

const empty: Observation = { at: new Date(), configurations: new Map(), state: { webhooks: [] }, registrationMissing: false };

describe('RotationReconciler', () => {
  let events: { normal: ReturnType<typeof vi.fn>; warning: ReturnType<typeof vi.fn> };
  let metrics: CertManagerMetrics;
  let reconciler: RotationReconciler;

  beforeEach(() => {
    vi.mocked(cluster.writeSecret).mockReset();
    events = { normal: vi.fn(async () => undefined), warning: vi.fn(async () => undefined) };
    metrics = new CertManagerMetrics(new Registry());
    reconciler = new RotationReconciler(config, {} as KubeClient, events as unknown as EventRecorder, metrics);
  });

  it('on a first install writes the CA Secret, then the serving Secret, records Events and asks to confirm at once', async () => {
    vi.mocked(cluster.writeSecret).mockImplementation(async (_kc, _ns, name) => ({ metadata: { name, uid: `uid-${name}` } }));
    const result = await reconciler.reconcile(empty, () => true);
    expect(vi.mocked(cluster.writeSecret).mock.calls.map((c) => [c[2], c[3]])).toEqual([
      ['outrigger-webhook-ca', 'Opaque'],
      ['outrigger-injector-tls', 'kubernetes.io/tls'],
    ]);
    expect(result).toMatchObject({ writes: 2, requeueAfterMs: 0 });
    expect(events.normal.mock.calls.map((c) => c[1])).toEqual(expect.arrayContaining(['CaCreated', 'LeafIssued']));
    expect((await metrics.rotations.get()).values.map((v) => v.labels.reason)).toEqual(expect.arrayContaining(['CaCreated', 'LeafIssued']));
  });

  it('stops at the first failed write and counts it', async () => {
    vi.mocked(cluster.writeSecret).mockRejectedValueOnce(new Error('boom'));
    await expect(reconciler.reconcile(empty, () => true)).rejects.toThrow(/write-ca-secret failed/);
    expect(cluster.writeSecret).toHaveBeenCalledTimes(1);
    expect((await metrics.failures.get()).values).toEqual([expect.objectContaining({ labels: { step: 'write-ca-secret' }, value: 1 })]);
  });

  it('writes nothing once leadership is lost', async () => {
    const result = await reconciler.reconcile(empty, () => false);
    expect(cluster.writeSecret).not.toHaveBeenCalled();
    expect(result.writes).toBe(0);
  });
});
