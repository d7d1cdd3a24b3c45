import { Inject, Injectable } from '@nestjs/common';
import { buildInfo, optionalGauge, WatchMetrics } from '@outrigger/service';
import { Counter, Gauge, Registry } from 'prom-client';
import type { MetricsSnapshot } from '../rotation/index.js';
import { CERT_MANAGER_VERSION } from '../config/version.js';

/** The cert-manager's own metrics, registered once on the service registry. */
@Injectable()
export class CertManagerMetrics {
  readonly leader: Gauge;
  readonly rotations: Counter<'reason'>;
  readonly driftRepairs: Counter;
  readonly reconciles: Counter<'result'>;
  readonly failures: Counter<'step'>;
  readonly watches: WatchMetrics;
  private last: MetricsSnapshot | undefined;

  constructor(@Inject(Registry) registry: Registry) {
    // Read from the last observation at scrape time; no sample before the first one or while a certificate is missing.
    const latest = (read: (s: MetricsSnapshot) => number | null) => () => (this.last ? (read(this.last) ?? undefined) : undefined);
    optionalGauge({ registry, name: 'outrigger_cert_manager_ca_expiry_timestamp_seconds', help: 'notAfter of the signing CA (Unix seconds); absent when unknown.', value: latest((s) => s.caExpiry) });
    optionalGauge({ registry, name: 'outrigger_cert_manager_staged_ca_expiry_timestamp_seconds', help: 'notAfter of the staged CA (Unix seconds); present during a CA rotation only.', value: latest((s) => s.stagedCaExpiry) });
    optionalGauge({ registry, name: 'outrigger_cert_manager_leaf_expiry_timestamp_seconds', help: 'notAfter of the serving leaf (Unix seconds); absent when unknown.', value: latest((s) => s.leafExpiry) });
    optionalGauge({ registry, name: 'outrigger_cert_manager_bundle_cas', help: 'CAs in the published bundle; above one while a rotation is in progress.', value: latest((s) => s.bundleCaCount) });
    this.leader = new Gauge({ name: 'outrigger_cert_manager_leader', help: '1 while this replica holds the Lease and writes.', registers: [registry] });
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
      help: 'Failed reconcile writes by step (write-ca-secret, write-serving-secret, patch-webhook, register-webhook); a failed read counts as a reconcile error.',
      labelNames: ['step'],
      registers: [registry],
    });
    this.watches = new WatchMetrics(registry, 'outrigger_cert_manager');
    buildInfo(registry, 'outrigger_cert_manager', CERT_MANAGER_VERSION);
  }

  observe(snapshot: MetricsSnapshot): void {
    this.last = snapshot;
  }
}
