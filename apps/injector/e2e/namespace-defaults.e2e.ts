import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { createTestNamespace, kubeConfigFrom, repoRoot, writeTokenKubeconfig } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { heldAndListed } from './held-namespaces.js';
import { startInjector, type RunningInjector } from './injector-process.js';
import { eventually } from './eventually.js';

// A namespace's resource defaults for an agent (its <prefix><resource> annotations), read by the
// injector's namespace watch through a real kube-apiserver; a pod's own annotation wins; a default
// beyond the profile's bounds is refused naming the namespace.
const cp = inject('controlPlane');
const kc = kubeConfigFrom(cp.kubeconfigPath);
const PROFILE_FILE = join(repoRoot(), 'libs/admission/fixtures/profiles/config-agent.yaml');
const REVIEW = JSON.parse(readFileSync(join(repoRoot(), 'libs/admission/fixtures/reviews/v1-pod-no-annotations.json'), 'utf8')) as { request: { namespace: string; object: { metadata: { namespace: string; annotations?: Record<string, string> } } } };
const KEY = 'config-agent.example.com/limits.memory';
/** A ServiceAccount, ClusterRole and binding: an injector whose RBAC reads AgentProfiles but not namespaces. */
const TRIMMED = 'ns-defaults-trimmed-injector';
let injector: RunningInjector;
let namespace: string;

function kubectl(...args: string[]): string {
  return execFileSync(join(cp.binDir, 'kubectl'), ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The injector's answer for a pod of `namespace` opted into config-agent with `annotations`. */
function review(annotations: Record<string, string>, to = injector): Promise<{ allowed: boolean; status?: { message: string }; patch: string }> {
  const body = structuredClone(REVIEW);
  body.request.namespace = namespace;
  body.request.object.metadata.namespace = namespace;
  body.request.object.metadata.annotations = { 'config-agent.example.com/enable': 'true', ...annotations };
  return new Promise((resolve, reject) => {
    const req = request(new URL('/mutate', to.baseUrl), { method: 'POST', ca: to.ca, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => {
        const response = (JSON.parse(text) as { response: { allowed: boolean; status?: { message: string }; patch?: string } }).response;
        resolve({ ...response, patch: response.patch ? Buffer.from(response.patch, 'base64').toString('utf8') : '' });
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

beforeAll(async () => {
  kubectl('apply', '--server-side', '-f', join(repoRoot(), 'deploy/base/crd/agentprofiles.outrigger.dev.yaml'));
  kubectl('wait', '--for=condition=Established', '--timeout=60s', 'customresourcedefinitions/agentprofiles.outrigger.dev');
  kubectl('apply', '--server-side', '-f', PROFILE_FILE);
  namespace = await createTestNamespace(kc, 'ns-defaults', { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE });
  kubectl('annotate', 'namespace', namespace, `${KEY}=128Mi`);
  injector = await startInjector(undefined, { PROFILES_FILE: '', KUBECONFIG: cp.kubeconfigPath });
});

afterAll(async () => {
  kubectl('delete', '--ignore-not-found', 'agentprofile', 'config-agent');
  kubectl('delete', '--ignore-not-found', 'clusterrolebinding,clusterrole', TRIMMED);
  await injector?.process.stop();
});

describe('a namespace\'s resource defaults for an agent', () => {
  it('apply to its pods, a pod\'s own annotation wins, and a default beyond the bounds is refused naming the namespace', async () => {
    const defaulted = await eventually('the namespace default in force', () => review({}), (r) => r.patch.includes('"config-agent"'));
    expect(defaulted.patch).toContain('"resources":{"limits":{"memory":"128Mi"}}');
    expect((await review({ [KEY]: '256Mi' })).patch).toContain('"resources":{"limits":{"memory":"256Mi"}}');

    kubectl('annotate', '--overwrite', 'namespace', namespace, `${KEY}=1Gi`);
    const refused = await eventually('the changed default in force', () => review({}), (r) => !r.allowed);
    expect(refused.status?.message).toBe(`annotation ${KEY} of namespace ${namespace}: "1Gi" is outside the bounds of profile config-agent: limits.memory from 32Mi to 512Mi`);
    // The pod's own in-bounds value still wins over the namespace's.
    expect((await review({ [KEY]: '64Mi' })).allowed).toBe(true);
  });

  it('are reported by /readyz as a digest equal to the API server\'s list, which follows a namespace\'s change', async () => {
    const before = await eventually('the injector to hold the namespaces listed', () => heldAndListed(injector, kubectl), ({ held, listed }) => held?.digest === listed.digest);
    expect(before.held?.held).toBe(before.listed.count);
    kubectl('annotate', '--overwrite', 'namespace', namespace, `${KEY}=96Mi`);
    const after = await eventually('the injector to hold the annotated namespace', () => heldAndListed(injector, kubectl), ({ held, listed }) => held?.digest === listed.digest && listed.digest !== before.listed.digest);
    expect(after.held?.digest).not.toBe(before.held?.digest);
    expect((await review({})).patch).toContain('"resources":{"limits":{"memory":"96Mi"}}');
  });

  it('are never skipped: while the namespaces cannot be listed, an opted-in pod is refused at once naming why, though the profiles are known', async () => {
    kubectl('create', 'serviceaccount', '-n', namespace, TRIMMED);
    kubectl('create', 'clusterrole', TRIMMED, '--verb=get,list,watch', '--resource=agentprofiles.outrigger.dev');
    kubectl('create', 'clusterrolebinding', TRIMMED, `--clusterrole=${TRIMMED}`, `--serviceaccount=${namespace}:${TRIMMED}`);
    const kubeconfig = await writeTokenKubeconfig(kc, join(mkdtempSync(join(tmpdir(), 'ns-defaults-')), 'trimmed.kubeconfig'), namespace, TRIMMED);
    const trimmed = await startInjector(undefined, { PROFILES_FILE: '', KUBECONFIG: kubeconfig });
    try {
      // First the profiles are not loaded yet, then the namespaces' list is refused; never admitted.
      const refused = await eventually('the namespace list to be refused', () => review({}, trimmed), (r) => r.allowed || /forbidden/i.test(r.status?.message ?? ''));
      expect(refused.allowed).toBe(false);
      expect(refused.status?.message).toMatch(/^outrigger injector: the namespaces labelled for injection \(.*\) are not known yet: .*forbidden.*; retry shortly$/i);
    } finally {
      await trimmed.process.stop();
    }
  });
});
