import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import type { HealthChecks } from '@outrigger/service';
import { INJECTOR_VERSION } from '../config/version.js';
import { InjectionNamespacesService } from '../namespaces/injection-namespaces.service.js';
import { ProfilesService } from '../profiles/profiles.service.js';
import { ServingCertificateSource } from '../tls/serving-certificate.source.js';

@Injectable()
export class InjectorHealth implements HealthChecks {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly profilesService: ProfilesService,
    private readonly certificates: ServingCertificateSource,
    private readonly namespaces: InjectionNamespacesService,
  ) {}

  /** The process serves requests: nothing external, so a restart can fix what fails here. */
  liveness() {
    return [];
  }

  /** Profiles known, the namespaces' Pod Security levels known, and a valid serving certificate in place. */
  readiness() {
    return [() => this.profiles(), () => this.podSecurityLevels(), () => this.certificate()];
  }

  profiles() {
    const check = this.indicators.check('profiles');
    const loaded = this.profilesService.current();
    // No profile at all is a valid state (nothing to inject); not knowing them is not.
    if (!loaded) return check.down({ reason: this.profilesService.notLoadedReason() });
    // generations: what `outrigger check` compares with the rbac-syncer's observedGeneration; version: the stamp's, which it compares with its own.
    return check.up({ source: loaded.source, names: loaded.profiles.map((p) => p.name), generations: Object.fromEntries(this.profilesService.generations()), version: INJECTOR_VERSION });
  }

  /** Until listed, a pod could pass the webhook and then fail Pod Security over the agent, or miss its namespace's resource defaults or canary. */
  podSecurityLevels() {
    const check = this.indicators.check('namespaces');
    const reason = this.namespaces.notReadyReason();
    if (reason) return check.down({ reason });
    const held = this.namespaces.held();
    // held and digest: what `outrigger check` compares with its own list of the labelled namespaces.
    return check.up(held ? { podSecurityLabels: 'watched', ...held } : { podSecurityLabels: 'not read (PROFILES_FILE)' });
  }

  certificate() {
    const check = this.indicators.check('certificate');
    const status = this.certificates.status();
    if (!status) return check.down({ reason: 'no valid serving certificate' });
    if (status.notAfter <= new Date()) return check.down({ reason: `serving certificate expired at ${status.notAfter.toISOString()}` });
    // Still ready while the source's latest pair is not served: the last good one serves, and `check` reports why.
    return check.up({ ...status, notAfter: status.notAfter.toISOString() });
  }
}
