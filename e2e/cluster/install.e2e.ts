import { describe, expect, inject, it } from 'vitest';
import { OUTRIGGER_NAMESPACE, createNamespace, kubectl, kubectlJson } from './support.ts';

interface Deployment {
  metadata: { name: string };
  spec: { replicas: number; template: { spec: { securityContext?: { runAsNonRoot?: boolean }; containers: { image: string; securityContext?: { readOnlyRootFilesystem?: boolean; runAsNonRoot?: boolean } }[] } } };
  status: { availableReplicas?: number; readyReplicas?: number };
}

const { registry } = inject('cluster');

/** deploy/overlays/local as shipped: every service runs on the node with the manifests' own probes and hardening. */
describe('Outrigger installed from deploy/', () => {
  const deployments = kubectlJson<{ items: Deployment[] }>(['get', 'deployments', '-n', OUTRIGGER_NAMESPACE]).items;

  it('runs all three services, two replicas each, every replica ready', () => {
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['outrigger-cert-manager', 'outrigger-injector', 'outrigger-rbac-syncer']);
    for (const d of deployments) {
      expect(d.spec.replicas, d.metadata.name).toBe(2);
      expect(d.status.readyReplicas, d.metadata.name).toBe(2);
    }
  });

  it('runs the images built from this repository, as non-root, with read-only root filesystems', () => {
    for (const d of deployments) {
      const [container] = d.spec.template.spec.containers;
      // Pushed to the cluster's registry by the setup and run by digest (registry.e2e.ts checks the digests).
      expect(container?.image).toMatch(new RegExp(`^${registry.address}/outrigger/(injector|rbac-syncer|cert-manager)@sha256:[0-9a-f]{64}$`));
      expect(d.spec.template.spec.securityContext?.runAsNonRoot).toBe(true);
      expect(container?.securityContext?.readOnlyRootFilesystem).toBe(true);
    }
    // What the kernel sees: the injector's process runs as uid 65532 and cannot write to /.
    const pod = kubectl(['get', 'pods', '-n', OUTRIGGER_NAMESPACE, '-l', 'app.kubernetes.io/name=outrigger-injector', '-o', 'jsonpath={.items[0].metadata.name}']);
    expect(kubectl(['exec', '-n', OUTRIGGER_NAMESPACE, pod, '--', 'node', '-e', 'process.stdout.write(String(process.getuid()))'])).toBe('65532');
    expect(() => kubectl(['exec', '-n', OUTRIGGER_NAMESPACE, pod, '--', 'node', '-e', 'require("fs").writeFileSync("/x", "")'])).toThrow(/read-only file system/i);
  });

  it('keeps the shipped NetworkPolicies, PodDisruptionBudgets and the webhook with failurePolicy Fail', () => {
    expect(kubectl(['get', 'networkpolicies', '-n', OUTRIGGER_NAMESPACE, '-o', 'name']).split('\n').filter(Boolean)).toHaveLength(3);
    expect(kubectl(['get', 'pdb', '-n', OUTRIGGER_NAMESPACE, '-o', 'name']).split('\n').filter(Boolean)).toHaveLength(3);
    expect(kubectl(['get', 'mutatingwebhookconfiguration', 'outrigger-injector', '-o', 'jsonpath={.webhooks[0].failurePolicy}'])).toBe('Fail');
  });

  it('injects through the Service: a server-side dry run of an opted-in pod comes back with the agent', () => {
    const ns = createNamespace('dry-run');
    const pod = JSON.parse(
      kubectl(['create', '-n', ns, '--dry-run=server', '-o', 'json', '-f', '-'], JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'probe', annotations: { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://admin:8080', 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'probe' } },
        spec: { containers: [{ name: 'app', image: 'localhost/busybox:local' }] },
      })),
    ) as { metadata: { annotations: Record<string, string> }; spec: { containers: { name: string; image: string }[] } };
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['app', 'xxl-agent']);
    expect(pod.spec.containers[1]?.image).toBe('localhost/outrigger/xxl-agent:local');
    // The stamp names the build the image was made from (tools/images/build-version.sh), not a bare package version.
    const stamp = JSON.parse(pod.metadata.annotations['xxl-agent/status'] ?? '{}') as { version?: string };
    expect(stamp.version).toMatch(/^\d+\.\d+\.\d+(\+[0-9a-f]{12}(\.dirty)?)?$/);
  });
});
