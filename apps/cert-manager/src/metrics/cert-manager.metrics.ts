import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';
import type { MetricsSnapshot } from '../rotation/index.js';

/** The cert-manager's own metrics, registered once on the service registry. */
@Injectable()
export class CertManagerMetrics {
  readonly caExpirySeconds: Gauge;
  readonly stagedCaExpirySeconds: Gauge;
  readonly leafExpirySeconds: Gauge;
  readonly bundleCaCount: Gauge;
  readonly leader: Gauge;
  readonly rotations: Counter<'reason'>;
  readonly driftRepairs: Counter;
  readonly reconciles: Counter<'result'>;
  readonly failures: Counter<'step'>;

  constructor(@Inject(Registry) registry: Registry) {
    const gauge = (name: string, help: string) => new Gauge({ name, help, registers: [registry] });
    this.caExpirySeconds = gauge('outrigger_cert_manager_ca_expiry_seconds', 'Seconds until the signing CA expires (negative once expired; absent when unknown).');
    this.stagedCaExpirySeconds = gauge('outrigger_cert_manager_staged_ca_expiry_seconds', 'Seconds until the staged CA expires, during a CA rotation.');
    this.leafExpirySeconds = gauge('outrigger_cert_manager_leaf_expiry_seconds', 'Seconds until the serving leaf expires (negative once expired; absent when unknown).');
    this.bundleCaCount = gauge('outrigger_cert_manager_bundle_ca_count', 'CAs in the published bundle; above one while a rotation is in progress.');
    this.leader = gauge('outrigger_cert_manager_leader', '1 while this replica holds the Lease and writes.');
    this.rotations = new Counter({
      name: 'outrigger_cert_manager_rotations_total',
      help: 'Certificate lifecycle steps written, by reason (LeafRenewed, CaStaged, SignerSwitched, CaDropped, ...).',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.driftRepairs = new Counter({
      name: 'outrigger_cert_manager_drift_repairs_total',
      help: 'Webhook caBundles found changed by someone else and restored.',
      registers: [registry],
    });
    this.reconciles = new Counter({
      name: 'outrigger_cert_manager_reconciles_total',
      help: 'Reconcile runs by result.',
      labelNames: ['result'],
      registers: [registry],
    });
    this.failures = new Counter({
      name: 'outrigger_cert_manager_failures_total',
      help: 'Failed reconcile steps by step (read, write-ca-secret, write-serving-secret, patch-webhook, register-webhook).',
      labelNames: ['step'],
      registers: [registry],
    });
  }

  observe(snapshot: MetricsSnapshot): void {
    setOrReset(this.caExpirySeconds, snapshot.caExpirySeconds);
    setOrReset(this.stagedCaExpirySeconds, snapshot.stagedCaExpirySeconds);
    setOrReset(this.leafExpirySeconds, snapshot.leafExpirySeconds);
    this.bundleCaCount.set(snapshot.bundleCaCount);
  }
}

function setOrReset(gauge: Gauge, value: number | null): void {
  if (value === null) gauge.reset();
  else gauge.set(value);
}
