import { Inject, Injectable } from '@nestjs/common';
import { buildInfo, WatchMetrics } from '@outrigger/service';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { INJECTOR_VERSION } from '../config/version.js';

const OUTCOMES = ['injected', 'skipped', 'denied', 'invalid', 'error', 'unready'] as const;
export type AdmissionOutcome = (typeof OUTCOMES)[number];

/** The injector's own metrics, registered once on the service registry. */
@Injectable()
export class InjectorMetrics {
  readonly requests: Counter<'outcome'>;
  readonly mutationSeconds: Histogram;
  readonly profileReloads: Counter<'result'>;
  readonly certificateReloads: Counter<'result'>;
  readonly certificateExpiry: Gauge;
  /** Each watch (AgentProfiles, labelled namespaces, the serving Secret) adds itself: a replica whose watch keeps failing serves what it last saw. */
  readonly watches: WatchMetrics;

  constructor(@Inject(Registry) registry: Registry) {
    this.requests = new Counter({
      name: 'outrigger_injector_admission_requests_total',
      help: 'AdmissionReview requests by outcome (invalid = rejected with HTTP 4xx; unready = refused while the profiles or the labelled namespaces are not known yet).',
      labelNames: ['outcome'],
      registers: [registry],
    });
    // Every outcome from 0, so that rate() sees the first error too.
    for (const outcome of OUTCOMES) this.requests.inc({ outcome }, 0);
    this.mutationSeconds = new Histogram({
      name: 'outrigger_injector_mutation_duration_seconds',
      help: 'Time from a parsed AdmissionReview to its encoded reply.',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
      registers: [registry],
    });
    this.profileReloads = new Counter({
      name: 'outrigger_injector_profile_reloads_total',
      help: 'Agent profile (re)loads by result (failure keeps the last good profiles).',
      labelNames: ['result'],
      registers: [registry],
    });
    this.certificateReloads = new Counter({
      name: 'outrigger_injector_certificate_reloads_total',
      help: 'Serving certificate reloads by result (failure keeps the current certificate).',
      labelNames: ['result'],
      registers: [registry],
    });
    this.certificateExpiry = new Gauge({
      name: 'outrigger_injector_serving_certificate_expiry_timestamp_seconds',
      help: 'notAfter of the certificate being served (Unix seconds); alert when it comes near.',
      registers: [registry],
    });
    // No sample until a certificate is served: prom-client starts a label-free gauge at 0, which reads as expired.
    this.certificateExpiry.remove({});
    this.watches = new WatchMetrics(registry, 'outrigger_injector');
    buildInfo(registry, 'outrigger_injector', INJECTOR_VERSION);
  }
}
