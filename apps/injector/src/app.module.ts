import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { HealthModule, KubeClientModule, MetricsModule } from '@outrigger/service';
import { AdmissionService } from './admission/admission.service.js';
import { MutateRoute } from './admission/mutate.route.js';
import { type InjectorConfig, injectorConfig } from './config/injector.config.js';
import { InjectorHealth } from './health/injector.health.js';
import { InjectorMetrics } from './metrics/injector.metrics.js';
import { InjectionNamespacesService } from './namespaces/injection-namespaces.service.js';
import { ProfilesService } from './profiles/profiles.service.js';
import { HttpsHandshakeCertificates } from './tls/https-handshake.js';
import { ServingCertificateSource } from './tls/serving-certificate.source.js';

@Module({
  imports: [
    ConfigModule.forRoot({ ignoreEnvFile: true, load: [injectorConfig] }),
    // The drain after SIGTERM is MutateRoute's (DRAIN_MS, with Connection: close); a second wait here would double the stop time.
    HealthModule.forRoot({ checks: InjectorHealth, gracefulShutdownTimeoutMs: 0 }),
    // Only the AgentProfile and namespace watches and TLS_SECRET talk to the API; a local run with files needs no cluster.
    KubeClientModule.forRootAsync({
      imports: [ConfigModule.forFeature(injectorConfig)],
      inject: [injectorConfig.KEY],
      useFactory: (config: InjectorConfig) => ({ kubeconfig: config.kubeconfig, enabled: !config.profilesFile || config.tls.secret !== undefined }),
    }),
    MetricsModule,
  ],
  providers: [MutateRoute, AdmissionService, ProfilesService, InjectionNamespacesService, ServingCertificateSource, HttpsHandshakeCertificates, InjectorHealth, InjectorMetrics],
})
export class AppModule {}
