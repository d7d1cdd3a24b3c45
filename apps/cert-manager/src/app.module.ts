import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { HealthModule, KubeClientModule, MetricsModule } from '@outrigger/service';
import { type CertManagerConfig, certManagerConfig } from './config/cert-manager.config.js';
import { eventRecorderProvider } from './controller/event-recorder.provider.js';
import { RotationController } from './controller/rotation-controller.js';
import { RotationReconciler } from './controller/rotation-reconciler.js';
import { CertManagerHealth } from './health/cert-manager.health.js';
import { CertManagerMetrics } from './metrics/cert-manager.metrics.js';

@Module({
  imports: [
    ConfigModule.forRoot({ ignoreEnvFile: true, load: [certManagerConfig] }),
    HealthModule.forRoot({ checks: CertManagerHealth }),
    KubeClientModule.forRootAsync({ imports: [ConfigModule.forFeature(certManagerConfig)], inject: [certManagerConfig.KEY], useFactory: (config: CertManagerConfig) => ({ kubeconfig: config.kubeconfig }) }),
    MetricsModule,
  ],
  providers: [eventRecorderProvider, CertManagerMetrics, RotationReconciler, RotationController, CertManagerHealth],
})
export class AppModule {}
