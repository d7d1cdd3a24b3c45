import { describe, expect, it } from 'vitest';
import { reviewResponse } from '@outrigger/admission';
import { type AgentProfile, type PodSecurityLevel, referenceProfile } from '@outrigger/agent-profiles';
import { sidecarExtension } from './sidecar-extension.js';
import { inNamespace, loadReview } from './testing/fixtures.js';

const RESTRICTED = referenceProfile();
/** The reference agent without its securityContext: baseline, accepted by name. */
const BASELINE: AgentProfile = { ...RESTRICTED, container: { ...RESTRICTED.container, securityContext: undefined }, dangerouslyAllowPodSecurity: 'baseline' };
const PRIVILEGED: AgentProfile = { ...RESTRICTED, container: { ...RESTRICTED.container, securityContext: { privileged: true } }, dangerouslyAllowPodSecurity: 'privileged' };

function decide(profile: AgentProfile, namespace: string, levels: Record<string, PodSecurityLevel>) {
  const extension = sidecarExtension({ profiles: [profile], injectorVersion: 'test', namespacePodSecurity: (ns) => levels[ns] });
  return reviewResponse(inNamespace(loadReview('v1-pod-opted-in'), namespace), [extension]);
}

describe('the namespace enforces a Pod Security level the agent does not meet', () => {
  const levels: Record<string, PodSecurityLevel> = { strict: 'restricted', usual: 'baseline', open: 'privileged' };

  it('refuses the pod, naming the profile, its field, the namespace and its label', () => {
    const outcome = decide(BASELINE, 'strict', levels);
    expect(outcome.decision).toBe('denied:pod-security');
    expect(outcome.reply.response.status).toMatchObject({
      code: 403,
      message:
        'profile xxl-job: its agent meets only the baseline Pod Security level (spec.dangerouslyAllowPodSecurity: baseline) and namespace strict ' +
        'enforces restricted (label pod-security.kubernetes.io/enforce), which would refuse the pod; use a profile whose agent meets restricted',
    });
    expect(decide(PRIVILEGED, 'usual', levels).decision).toBe('denied:pod-security');
  });

  it('injects where the agent meets the level, and where the level is unknown (the API server\'s defaults apply)', () => {
    expect(decide(RESTRICTED, 'strict', levels).decision).toBe('injected');
    expect(decide(BASELINE, 'usual', levels).decision).toBe('injected');
    expect(decide(PRIVILEGED, 'open', levels).decision).toBe('injected');
    expect(decide(PRIVILEGED, 'unlabelled', levels).decision).toBe('injected');
    const withoutView = reviewResponse(inNamespace(loadReview('v1-pod-opted-in'), 'strict'), [sidecarExtension({ profiles: [BASELINE], injectorVersion: 'test' })]);
    expect(withoutView.decision).toBe('injected');
  });
});
