/**
 * The oldest Kubernetes the install works on (ValidatingAdmissionPolicy v1, webhook matchConditions,
 * preStop.sleep): `outrigger check` refuses older API servers, the Helm chart's kubeVersion says it,
 * and deploy/tests/kubernetes-floor.e2e.ts applies the install to a kube-apiserver of this minor
 * (tools/kube/floor).
 */
export const MINIMUM_KUBERNETES = { major: 1, minor: 30 } as const;
