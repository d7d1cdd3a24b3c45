import type { HealthIndicatorFunction } from '@nestjs/terminus';

/** A service's own checks, named in HealthModule.forRoot({ checks }). */
export interface HealthChecks {
  /** Fails only for what a restart can fix. */
  liveness(): HealthIndicatorFunction[];
  /** Fails while the service should get no traffic (or, for controllers, is not doing its job). */
  readiness(): HealthIndicatorFunction[];
}
