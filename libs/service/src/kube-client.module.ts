import { Module } from '@nestjs/common';
import { loadKubeClient } from '@outrigger/kube';
import { ConfigurableModuleClass, KUBE_CLIENT_OPTIONS, type KubeClientOptions } from './kube-client.module-definition.js';

/** Injection token of the service's one Kubernetes client (a KubeClient from @outrigger/kube). */
export const KUBE_CLIENT = Symbol('KUBE_CLIENT');

/**
 * The Kubernetes client every service builds the same way: `KubeClientModule.forRootAsync({ inject:
 * [config.KEY], useFactory: (c) => ({ kubeconfig: c.kubeconfig }) })`, then `@Inject(KUBE_CLIENT)`.
 * A kubeconfig that cannot be read stops startup, naming it.
 */
@Module({
  providers: [{ provide: KUBE_CLIENT, inject: [KUBE_CLIENT_OPTIONS], useFactory: (options: KubeClientOptions) => (options.enabled === false ? undefined : loadKubeClient(options.kubeconfig)) }],
  exports: [KUBE_CLIENT],
})
export class KubeClientModule extends ConfigurableModuleClass {}
