import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { CertManagerHealth } from './cert-manager.health.js';

@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly certManager: CertManagerHealth,
  ) {}

  /** Liveness: the process serves requests. */
  @Get('healthz')
  @HealthCheck()
  healthz() {
    return this.health.check([]);
  }

  /** Readiness: the certificates the injector and the API server depend on are in place. */
  @Get('readyz')
  @HealthCheck()
  readyz() {
    return this.health.check([() => this.certManager.certificates()]);
  }
}
