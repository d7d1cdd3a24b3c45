import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { HealthModule, MetricsModule } from '@outrigger/service';
import { certManagerConfig } from './config/cert-manager.config.js';
import { kubeProviders } from './controller/kube.providers.js';
import { RotationController } from './controller/rotation-controller.js';
import { RotationReconciler } from './controller/rotation-reconciler.js';
import { CertManagerHealth } from './health/cert-manager.health.js';
import { CertManagerMetrics } from './metrics/cert-manager.metrics.js';

@Module({
  imports: [
    ConfigModule.forRoot({ ignoreEnvFile: true, load: [certManagerConfig] }),
    HealthModule.forRoot({ checks: CertManagerHealth }),
    MetricsModule,
  ],
  providers: [...kubeProviders, CertManagerMetrics, RotationReconciler, RotationController, CertManagerHealth],
})
export class AppModule {}
