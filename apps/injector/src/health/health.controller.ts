import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { InjectorHealth } from './injector.health.js';

@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly injector: InjectorHealth,
  ) {}

  /** Liveness: the process serves requests. Nothing external, so a restart can fix what fails here. */
  @Get('healthz')
  @HealthCheck()
  healthz() {
    return this.health.check([]);
  }

  /** Readiness: profiles loaded and a valid serving certificate in place. */
  @Get('readyz')
  @HealthCheck()
  readyz() {
    return this.health.check([() => this.injector.profiles(), () => this.injector.certificate()]);
  }
}
