import { Controller, Get, Inject, type OnApplicationBootstrap } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { HealthCheck, HealthCheckService, type HealthIndicatorFunction } from '@nestjs/terminus';
import { HEALTH_MODULE_OPTIONS, type HealthModuleOptions } from './health.module-definition.js';

/** A service's own checks, named in HealthModule.forRoot({ checks }). */
export interface HealthChecks {
  /** Fails only for what a restart can fix. */
  liveness(): HealthIndicatorFunction[];
  /** Fails while the service should get no traffic (or, for controllers, is not doing its job). */
  readiness(): HealthIndicatorFunction[];
}

/** GET /healthz and /readyz for every service, from its HealthChecks. */
@Controller()
export class HealthController implements OnApplicationBootstrap {
  private checks!: HealthChecks;

  constructor(
    private readonly health: HealthCheckService,
    private readonly moduleRef: ModuleRef,
    @Inject(HEALTH_MODULE_OPTIONS) private readonly options: HealthModuleOptions,
  ) {}

  // The checks class lives in the app's module, which imports this one: found once everything is built.
  onApplicationBootstrap(): void {
    this.checks = this.moduleRef.get(this.options.checks, { strict: false });
  }

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
