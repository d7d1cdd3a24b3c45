import { hostname } from 'node:os';
import type { Provider } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { KubeConfig } from '@kubernetes/client-node';
import { EventRecorder, loadKubeConfig } from '@outrigger/kube';
import { type CertManagerConfig, certManagerConfig } from '../config/cert-manager.config.js';

/** Injection tokens: client-node's KubeConfig is a class, but tests replace it, so inject by token. */
export const KUBE_CONFIG = Symbol('KUBE_CONFIG');
export const EVENT_RECORDER = Symbol('EVENT_RECORDER');
export const COMPONENT = 'outrigger-cert-manager';

export const kubeProviders: Provider[] = [
  {
    provide: KUBE_CONFIG,
    inject: [certManagerConfig.KEY],
    useFactory: (config: CertManagerConfig) => loadKubeConfig(config.kubeconfig),
  },
  {
    provide: EVENT_RECORDER,
    inject: [KUBE_CONFIG, certManagerConfig.KEY],
    useFactory: (kc: KubeConfig, config: CertManagerConfig) => {
      const log = new Logger('EventRecorder');
      return new EventRecorder(kc, { component: COMPONENT, instance: config.instance ?? hostname(), logger: (message) => log.warn(message) });
    },
  },
];
