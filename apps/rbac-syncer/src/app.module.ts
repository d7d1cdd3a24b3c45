import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { HealthModule, KubeClientModule, MetricsModule } from '@outrigger/service';
import { rbacSyncerConfig, type RbacSyncerConfig } from './config/rbac-syncer.config.js';
import { SyncerController } from './controller/syncer-controller.js';
import { RbacSyncerHealth } from './health/rbac-syncer.health.js';
import { RbacSyncerMetrics } from './metrics/rbac-syncer.metrics.js';

@Module({
  imports: [
    ConfigModule.forRoot({ ignoreEnvFile: true, load: [rbacSyncerConfig] }),
    KubeClientModule.forRootAsync({ imports: [ConfigModule.forFeature(rbacSyncerConfig)], inject: [rbacSyncerConfig.KEY], useFactory: (config: RbacSyncerConfig) => ({ kubeconfig: config.kubeconfig }) }),
    HealthModule.forRoot({ checks: RbacSyncerHealth, gracefulShutdownTimeoutMs: 2_000 }),
    MetricsModule,
  ],
  providers: [SyncerController, RbacSyncerHealth, RbacSyncerMetrics],
})
export class AppModule {}
