import { Controller, Get, Inject } from '@nestjs/common';
import { HealthCheck, HealthCheckService, type HealthIndicatorFunction } from '@nestjs/terminus';

/** A service's own checks; its module provides them as HEALTH_CHECKS (`useExisting` its health class). */
export interface HealthChecks {
  /** Fails only for what a restart can fix. */
  liveness(): HealthIndicatorFunction[];
  /** Fails while the service should get no traffic (or, for controllers, is not doing its job). */
  readiness(): HealthIndicatorFunction[];
}

export const HEALTH_CHECKS = Symbol('HEALTH_CHECKS');

/** GET /healthz and /readyz for every service, from its HealthChecks. */
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    @Inject(HEALTH_CHECKS) private readonly checks: HealthChecks,
  ) {}

  @Get('healthz')
  @HealthCheck()
  healthz() {
    return this.health.check(this.checks.liveness());
  }

  @Get('readyz')
  @HealthCheck()
  readyz() {
    return this.health.check(this.checks.readiness());
  }
}
