import type { ServiceComponent } from './install-names.js';

/**
 * The files of deploy/base that hold each service's ServiceAccount and RBAC, and the injector's
 * Service: what `outrigger check` tells `outrigger restore` to re-create from when some of it is
 * missing. Each object in them carries the labels its base gives it, so created alone it is what
 * `kubectl apply -k` made (deploy/tests/install-names.spec.ts holds both to deploy/base).
 */
export const SERVICE_RBAC_FILES: Readonly<Record<ServiceComponent, readonly string[]>> = {
  injector: ['deploy/base/injector/service-account.yaml', 'deploy/base/injector/role.yaml', 'deploy/base/injector/role-binding.yaml'],
  'rbac-syncer': ['deploy/base/rbac-syncer/rbac.yaml'],
  'cert-manager': ['deploy/base/cert-manager/rbac.yaml'],
};

export const INJECTOR_SERVICE_FILE = 'deploy/base/injector/service.yaml';

/**
 * The label naming the installation: each overlay's `labels` and the Helm chart (its release's name)
 * put it on every object; deploy/base carries none.
 */
export const INSTANCE_LABEL = 'app.kubernetes.io/instance';

/** The labels each base gives all its objects (its kustomization's `labels`). */
export function baseLabels(component: ServiceComponent | 'webhook'): Record<string, string> {
  return { 'app.kubernetes.io/part-of': 'outrigger', 'app.kubernetes.io/component': component };
}
