import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { applyPatchCopy, decodePatch, isJsonObject, type JsonObject, type JsonValue, reviewResponse } from '@outrigger/admission';
import { parseProfiles, REFERENCE_PROFILE_FILE, referenceProfile } from '@outrigger/agent-profiles';
import { sidecarExtension } from './sidecar-extension.js';
import { loadReview, loadTextFixture, requestObject, withAnnotations } from './testing/fixtures.js';
import { arrayAt, objectAt } from './testing/pods.js';
import { verifyInjectedAgent } from './verify-injected-agent.js';

const profile = referenceProfile();

/** A pod as the API server holds it, carrying the reference agent injected for its annotations. */
function injectedPod(): JsonObject {
  return requestObject(loadReview('v1-pod-already-injected'));
}

function item(list: JsonValue[], index: number): JsonObject {
  const value = list[index];
  if (!isJsonObject(value)) throw new Error(`no object at [${index}]`);
  return value;
}

function agentOf(pod: JsonObject): JsonObject {
  return item(arrayAt(pod, 'spec', 'containers'), 2);
}

function problemAfter(change: (pod: JsonObject, agent: JsonObject) => void): string | undefined {
  const pod = injectedPod();
  change(pod, agentOf(pod));
  const verdict = verifyInjectedAgent(pod, profile);
  return verdict.ok ? undefined : verdict.problem;
}

describe('verifyInjectedAgent', () => {
  it('accepts the agent as the API server stores it, and as the webhook wrote it before the defaults', () => {
    expect(verifyInjectedAgent(injectedPod(), profile)).toEqual({ ok: true });
    const raw = problemAfter((_, agent) => {
      for (const key of ['terminationMessagePath', 'terminationMessagePolicy']) delete agent[key];
      delete item(arrayAt(agent, 'ports'), 0)['protocol'];
    });
    expect(raw).toBeUndefined();
  });

  it('names the field that differs', () => {
    expect(problemAfter((_, agent) => (agent['image'] = 'ghcr.io/outrigger/xxl-agent:0.9.0'))).toBe('container xxl-agent: image is not what the injector renders');
    expect(problemAfter((_, agent) => (agent['command'] = ['sh']))).toBe('container xxl-agent: command is not what the injector renders');
    expect(problemAfter((_, agent) => (objectAt(agent, 'securityContext')['runAsUser'] = 0))).toBe('container xxl-agent: securityContext.runAsUser is not what the injector renders');
    expect(problemAfter((_, agent) => (item(arrayAt(agent, 'env'), 1)['value'] = 'metrics-exporter'))).toBe('container xxl-agent: env[1].value is not what the injector renders');
    expect(problemAfter((_, agent) => arrayAt(agent, 'volumeMounts').push({ name: 'host', mountPath: '/host' }))).toBe('container xxl-agent: volumeMounts[2] is not what the injector renders');
  });

  it('renders the env from the pod\'s own annotations: an annotation changed after creation no longer matches', () => {
    const problem = problemAfter((pod) => (objectAt(pod, 'metadata', 'annotations')['xxl-agent/job-name'] = 'other'));
    expect(problem).toBe('container xxl-agent: env[2].value is not what the injector renders');
    expect(problemAfter((pod) => (objectAt(pod, 'metadata', 'annotations')['xxl-agent/target-container'] = 'gone'))).toMatch(
      /^the injector would refuse it: annotation xxl-agent\/target-container: value "gone" does not name a container of the pod/,
    );
  });

  it('requires the status annotation naming the profile, one agent, in the profile\'s list', () => {
    expect(problemAfter((pod) => delete objectAt(pod, 'metadata', 'annotations')['xxl-agent/status'])).toBe('annotation xxl-agent/status is missing');
    expect(problemAfter((pod) => (objectAt(pod, 'metadata', 'annotations')['xxl-agent/status'] = '{"profile":"other"}'))).toBe('annotation xxl-agent/status does not name profile xxl-job');
    expect(problemAfter((pod, agent) => arrayAt(pod, 'spec', 'containers').push(structuredClone(agent)))).toBe('the pod has 2 containers named xxl-agent');
    expect(problemAfter((pod, agent) => {
      objectAt(pod, 'spec')['containers'] = arrayAt(pod, 'spec', 'containers').slice(0, 2);
      objectAt(pod, 'spec')['initContainers'] = [agent];
    })).toBe('container xxl-agent is in initContainers, the profile injects into containers');
  });

  it('refuses a pod on the node\'s namespaces unless the profile allows them', () => {
    const pod = injectedPod();
    objectAt(pod, 'spec')['hostPID'] = true;
    expect(verifyInjectedAgent(pod, profile)).toEqual({ ok: false, problem: expect.stringContaining('spec.hostPID: true') });
    // Allowed the node's namespaces, the agent still holds its token alone: no process of the node's may reach it.
    expect(verifyInjectedAgent(pod, { ...profile, dangerouslyAllowHostNamespaces: true })).toEqual({ ok: false, problem: "spec.hostPID is true: other containers could read the agent's token through the node's processes" });
    const onHostNetwork = injectedPod();
    objectAt(onHostNetwork, 'spec')['hostNetwork'] = true;
    expect(verifyInjectedAgent(onHostNetwork, profile)).toEqual({ ok: false, problem: expect.stringContaining('spec.hostNetwork: true') });
    expect(verifyInjectedAgent(onHostNetwork, { ...profile, dangerouslyAllowHostNamespaces: true })).toEqual({ ok: true });
  });

  it('requires the agent\'s token to be the agent\'s alone where the profile takes the pod\'s away', () => {
    const tokenVolume = (pod: JsonObject) => item(arrayAt(pod, 'spec', 'volumes'), 0);
    expect(problemAfter((pod) => (objectAt(pod, 'spec')['automountServiceAccountToken'] = true))).toBe('spec.automountServiceAccountToken is not false: the pod keeps its own token');
    expect(problemAfter((pod) => (objectAt(pod, 'spec')['shareProcessNamespace'] = true))).toBe("spec.shareProcessNamespace is true: other containers could read the agent's token");
    expect(problemAfter((pod) => arrayAt(pod, 'spec', 'volumes').push({ name: 'mine', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }))).toBe(
      "volume mine projects a ServiceAccount token besides the agent's token",
    );
    expect(problemAfter((pod) => (item(arrayAt(pod, 'spec', 'containers'), 0)['volumeMounts'] = [{ name: 'outrigger-agent-token', mountPath: '/t' }]))).toBe(
      "container orders mounts outrigger-agent-token, the agent's token volume",
    );
    expect(problemAfter((pod) => (objectAt(tokenVolume(pod), 'projected')['defaultMode'] = 511))).toBe('volume outrigger-agent-token is not what the injector writes');
    expect(problemAfter((pod) => (objectAt(pod, 'metadata', 'annotations')['xxl-agent/keep-pod-token'] = 'true'))).toMatch(/^the injector would refuse it: annotation xxl-agent\/keep-pod-token: profile xxl-job does not let pods keep/);
  });

  it('lets the verified agents of other profiles in force share the agent\'s token, and nothing else', () => {
    const parsed = parseProfiles([readFileSync(REFERENCE_PROFILE_FILE, 'utf8'), loadTextFixture('profiles/tracing.yaml')].join('\n---\n'));
    if (!parsed.ok) throw new Error(parsed.error);
    const [xxlJob, tracing] = parsed.value;
    if (!xxlJob || !tracing) throw new Error('two profiles expected');
    const review = withAnnotations(loadReview('v1-pod-opted-in'), { 'tracing.example.com/enable': 'true' });
    const outcome = reviewResponse(review, [sidecarExtension({ profiles: parsed.value, injectorVersion: '1.0.0' })]);
    const pod = applyPatchCopy(requestObject(review), decodePatch(outcome.reply.response.patch ?? ''));
    expect(verifyInjectedAgent(pod, xxlJob, parsed.value)).toEqual({ ok: true });
    expect(verifyInjectedAgent(pod, tracing, parsed.value)).toEqual({ ok: true });
    expect(verifyInjectedAgent(pod, xxlJob)).toEqual({ ok: false, problem: "container trace-agent mounts outrigger-agent-token, the agent's token volume" });
    item(arrayAt(pod, 'spec', 'initContainers'), 0)['command'] = ['sh'];
    expect(verifyInjectedAgent(pod, xxlJob, parsed.value)).toEqual({ ok: false, problem: "container trace-agent mounts outrigger-agent-token, the agent's token volume" });
  });

  it('gives the same verdict when called again for another pod of the same workload (memoized rendering)', () => {
    const first = injectedPod();
    const second = injectedPod();
    objectAt(second, 'metadata')['name'] = 'orders-worker-2';
    expect(verifyInjectedAgent(first, profile)).toEqual({ ok: true });
    expect(verifyInjectedAgent(second, profile)).toEqual({ ok: true });
    agentOf(second)['args'] = ['--evil'];
    expect(verifyInjectedAgent(second, profile).ok).toBe(false);
    expect(verifyInjectedAgent(first, profile)).toEqual({ ok: true });
  });
});
