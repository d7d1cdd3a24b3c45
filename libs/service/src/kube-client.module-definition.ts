import { ConfigurableModuleBuilder } from '@nestjs/common';

export interface KubeClientOptions {
  /** A kubeconfig path; unset: the first file of $KUBECONFIG, else the pod's ServiceAccount (loadKubeClient). */
  readonly kubeconfig?: string;
  /** false: this run never talks to the API server (local files only), and KUBE_CLIENT is undefined. */
  readonly enabled?: boolean;
}

export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN: KUBE_CLIENT_OPTIONS } = new ConfigurableModuleBuilder<KubeClientOptions>().setClassMethodName('forRoot').build();
