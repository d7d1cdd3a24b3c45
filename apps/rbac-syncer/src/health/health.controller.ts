import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { RbacSyncerHealth } from './rbac-syncer.health.js';

@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly syncer: RbacSyncerHealth,
  ) {}

  /** Liveness: fails when the watches have been broken too long (a restart may help). */
  @Get('healthz')
  @HealthCheck()
  healthz() {
    return this.health.check([() => this.syncer.watch()]);
  }

  /** Readiness: the first full sync is done, the watches are not dead, the exec guard is in force. */
  @Get('readyz')
  @HealthCheck()
  readyz() {
    return this.health.check([() => this.syncer.synced(), () => this.syncer.watch(), () => this.syncer.execGuard()]);
  }
}
