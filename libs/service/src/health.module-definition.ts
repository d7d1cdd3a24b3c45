import { ConfigurableModuleBuilder, type Type } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import type { HealthChecks } from './health-checks.js';

export interface HealthModuleOptions {
  /** The service's HealthChecks class, a provider of its own module. */
  readonly checks: Type<HealthChecks>;
}

export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN: HEALTH_MODULE_OPTIONS } = new ConfigurableModuleBuilder<HealthModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ gracefulShutdownTimeoutMs: 5_000 }, (definition, extras) => {
    // Exported too: the app's HealthChecks class injects terminus's HealthIndicatorService.
    const terminus = TerminusModule.forRoot({ gracefulShutdownTimeoutMs: extras.gracefulShutdownTimeoutMs });
    return { ...definition, imports: [...(definition.imports ?? []), terminus], exports: [...(definition.exports ?? []), terminus] };
  })
  .build();
