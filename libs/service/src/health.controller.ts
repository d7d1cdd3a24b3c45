import { Controller, Get, Inject, type OnApplicationBootstrap } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import type { HealthChecks } from './health-checks.js';
import { HEALTH_MODULE_OPTIONS, type HealthModuleOptions } from './health.module-definition.js';

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
