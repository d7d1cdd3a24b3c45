import 'reflect-metadata';
import { Injectable, Module, ServiceUnavailableException } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HealthIndicatorService } from '@nestjs/terminus';
import { describe, expect, it } from 'vitest';
import type { HealthChecks } from './health-checks.js';
import { HealthController } from './health.controller.js';
import { HealthModule } from './health.module.js';

@Injectable()
class AppHealth implements HealthChecks {
  ready = false;
  constructor(private readonly indicator: HealthIndicatorService) {}
  liveness() {
    return [() => this.indicator.check('loop').up()];
  }
  readiness() {
    return [() => (this.ready ? this.indicator.check('work').up() : this.indicator.check('work').down({ reason: 'not yet' }))];
  }
}

@Module({ imports: [HealthModule.forRoot({ checks: AppHealth })], providers: [AppHealth] })
class AppModule {}

describe('HealthModule', () => {
  it("serves the app's own checks, whose class injects terminus from the app's module", async () => {
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
    await app.init();
    const health = app.get(HealthController);
    await expect(health.healthz()).resolves.toMatchObject({ status: 'ok', info: { loop: { status: 'up' } } });
    await expect(health.readyz()).rejects.toBeInstanceOf(ServiceUnavailableException);
    app.get(AppHealth).ready = true;
    await expect(health.readyz()).resolves.toMatchObject({ status: 'ok', info: { work: { status: 'up' } } });
    await app.close();
  });
});
