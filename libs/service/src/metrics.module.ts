import { ConfigurableModuleBuilder, Global, Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import { MetricsController } from './metrics.controller.js';
import { createMetricsRegistry } from './metrics.registry.js';

export interface MetricsModuleOptions {
  readonly service: string;
}

const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN } = new ConfigurableModuleBuilder<MetricsModuleOptions>().setClassMethodName('forRoot').build();

/** GET /metrics in Prometheus format, and the `Registry` for the service's own metrics. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [{ provide: Registry, inject: [MODULE_OPTIONS_TOKEN], useFactory: (o: MetricsModuleOptions) => createMetricsRegistry(o.service) }],
  exports: [Registry],
})
export class MetricsModule extends ConfigurableModuleClass {}
