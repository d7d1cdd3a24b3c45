import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { ConfigurableModuleClass } from './health.module-definition.js';

/** GET /healthz and /readyz for a service, from its HealthChecks: `HealthModule.forRoot({ checks: AppHealth })`. */
@Module({ controllers: [HealthController] })
export class HealthModule extends ConfigurableModuleClass {}
