import { hostname } from 'node:os';
import { Logger, type Provider } from '@nestjs/common';
import { INSTALL_NAMES } from '@outrigger/install/names';
import { EventRecorder, type KubeClient } from '@outrigger/kube';
import { KUBE_CLIENT } from '@outrigger/service';
import { type CertManagerConfig, certManagerConfig } from '../config/cert-manager.config.js';

/** Injection token: tests replace the recorder. */
export const EVENT_RECORDER = Symbol('EVENT_RECORDER');

export const eventRecorderProvider: Provider = {
  provide: EVENT_RECORDER,
  inject: [KUBE_CLIENT, certManagerConfig.KEY],
  useFactory: (kc: KubeClient, config: CertManagerConfig) => {
    const log = new Logger('EventRecorder');
    return new EventRecorder(kc, { component: INSTALL_NAMES.certManager, instance: config.instance ?? hostname(), logger: (message) => log.warn(message) });
  },
};
