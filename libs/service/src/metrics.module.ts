import { Global, Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import { MetricsController } from './metrics.controller.js';
import { createMetricsRegistry } from './metrics.registry.js';

/** GET /metrics in Prometheus format, and the `Registry` for the service's own metrics. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [{ provide: Registry, useFactory: createMetricsRegistry }],
  exports: [Registry],
})
export class MetricsModule {}
