import { hostname } from 'node:os';
import type { Provider } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { EventRecorder, loadKubeClient, type KubeClient } from '@outrigger/kube';
import { type CertManagerConfig, certManagerConfig } from '../config/cert-manager.config.js';

/** Injection tokens: KubeClient is an interface, and tests replace the recorder. */
export const KUBE_CLIENT = Symbol('KUBE_CLIENT');
export const EVENT_RECORDER = Symbol('EVENT_RECORDER');
export const COMPONENT = 'outrigger-cert-manager';

export const kubeProviders: Provider[] = [
  {
    provide: KUBE_CLIENT,
    inject: [certManagerConfig.KEY],
    useFactory: (config: CertManagerConfig) => loadKubeClient(config.kubeconfig),
  },
  {
    provide: EVENT_RECORDER,
    inject: [KUBE_CLIENT, certManagerConfig.KEY],
    useFactory: (kc: KubeClient, config: CertManagerConfig) => {
      const log = new Logger('EventRecorder');
      return new EventRecorder(kc, { component: COMPONENT, instance: config.instance ?? hostname(), logger: (message) => log.warn(message) });
    },
  },
];
