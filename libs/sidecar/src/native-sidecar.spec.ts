import { describe, expect, it } from 'vitest';
import { applyPatchCopy, decodePatch, type AdmissionReview, type JsonObject, reviewResponse } from '@outrigger/admission';
import { agentProfileSchema, type AgentProfile, parseProfiles } from '@outrigger/agent-profiles';
import { sidecarExtension } from './sidecar-extension.js';
import { loadReview, loadTextFixture, requestObject, withAnnotations } from './testing/fixtures.js';
import { arrayAt, objectAt } from './testing/pods.js';
import { verifyInjectedAgent } from './verify-injected-agent.js';

const CONFIG_AGENT = (() => {
  const parsed = parseProfiles(loadTextFixture('profiles/config-agent.yaml'));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value[0] as AgentProfile;
})();
const OPT_IN = { 'config-agent.example.com/enable': 'true' };

function run(review: AdmissionReview, profile: AgentProfile = CONFIG_AGENT) {
  const outcome = reviewResponse(review, [sidecarExtension({ profiles: [profile], injectorVersion: 'test' })]);
  const encoded = outcome.reply.response.patch;
  return { outcome, pod: applyPatchCopy(requestObject(review), encoded === undefined ? [] : decodePatch(encoded)) };
}

function review(annotations: Record<string, string> = {}, restartPolicy?: string): AdmissionReview {
  const r = withAnnotations(loadReview('v1-pod-no-annotations'), { ...OPT_IN, ...annotations });
  if (restartPolicy !== undefined) objectAt(requestObject(r), 'spec')['restartPolicy'] = restartPolicy;
  return r;
}

/** Where the agent went: the list, and its restartPolicy. */
function placement(pod: JsonObject): string {
  const spec = objectAt(pod, 'spec');
  for (const list of ['initContainers', 'containers']) {
    const agent = (spec[list] === undefined ? [] : arrayAt(spec, list)).find((c) => (c as JsonObject)['name'] === 'config-agent') as JsonObject | undefined;
    if (agent) return `${list}${agent['restartPolicy'] === undefined ? '' : ` restartPolicy=${String(agent['restartPolicy'])}`}`;
  }
  return 'none';
}

describe('how the agent runs: regular container or native sidecar', () => {
  it('is a native sidecar in every pod that runs to completion (a Job\'s, a CronJob\'s), whatever the profile says, and verifies so', () => {
    expect(placement(run(review()).pod)).toBe('containers');
    for (const policy of ['Never', 'OnFailure']) {
      const { pod } = run(review({}, policy));
      expect(placement(pod), policy).toBe('initContainers restartPolicy=Always');
      expect(verifyInjectedAgent(pod, CONFIG_AGENT)).toEqual({ ok: true });
    }
    expect(placement(run(review({}, 'Always')).pod)).toBe('containers');
  });

  it('follows the pod\'s <prefix>native-sidecar choice where the profile allows it, both ways', () => {
    const choosing = { ...CONFIG_AGENT, podMayChooseNativeSidecar: true };
    const native = run(review({ 'config-agent.example.com/native-sidecar': 'true' }), choosing).pod;
    expect(placement(native)).toBe('initContainers restartPolicy=Always');
    expect(verifyInjectedAgent(native, choosing)).toEqual({ ok: true });
    // The stored pod is judged by its own annotation: the same agent without it is not the injector's.
    const withoutChoice = structuredClone(native);
    delete objectAt(withoutChoice, 'metadata', 'annotations')['config-agent.example.com/native-sidecar'];
    expect(verifyInjectedAgent(withoutChoice, choosing)).toMatchObject({ ok: false, problem: 'container config-agent is in initContainers, the profile injects into containers' });
    const regular = run(review({ 'config-agent.example.com/native-sidecar': 'false' }), { ...choosing, nativeSidecar: true }).pod;
    expect(placement(regular)).toBe('containers');
    // Never a regular container in a pod that runs to completion.
    expect(placement(run(review({ 'config-agent.example.com/native-sidecar': 'false' }, 'Never'), choosing).pod)).toBe('initContainers restartPolicy=Always');
  });

  it('refuses the choice where the profile does not allow it, and a malformed one, naming the annotation', () => {
    const refused = run(review({ 'config-agent.example.com/native-sidecar': 'true' })).outcome;
    expect(refused.reply.response).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(refused.reply.response.status?.message).toBe(
      'annotation config-agent.example.com/native-sidecar: profile config-agent does not let pods choose how its agent runs (spec.podMayChooseNativeSidecar is not true); remove the annotation',
    );
    const malformed = run(review({ 'config-agent.example.com/native-sidecar': 'yes' }), { ...CONFIG_AGENT, podMayChooseNativeSidecar: true }).outcome;
    expect(malformed.reply.response).toMatchObject({ allowed: false, status: { code: 400 } });
    expect(malformed.reply.response.status?.message).toMatch(/^annotation config-agent\.example\.com\/native-sidecar: invalid boolean "yes"/);
  });

  it('holdApplicationUntilReady: always a native sidecar (with its startupProbe), and the profile needs the probe', () => {
    const hold = { ...CONFIG_AGENT, holdApplicationUntilReady: true };
    const { pod } = run(review(), hold);
    expect(placement(pod)).toBe('initContainers restartPolicy=Always');
    expect(verifyInjectedAgent(pod, hold)).toEqual({ ok: true });

    const { startupProbe: _probe, ...container } = CONFIG_AGENT.container;
    const issues = (input: unknown) => {
      const parsed = agentProfileSchema.safeParse(input);
      return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    };
    expect(issues({ ...CONFIG_AGENT, container, holdApplicationUntilReady: true })).toEqual(['holdApplicationUntilReady: needs container.startupProbe: the application starts once that probe succeeds']);
    expect(issues({ ...CONFIG_AGENT, holdApplicationUntilReady: true, podMayChooseNativeSidecar: true })).toEqual([
      'holdApplicationUntilReady: cannot be combined with podMayChooseNativeSidecar (an agent the application waits for is always a native sidecar)',
    ]);
  });
});
