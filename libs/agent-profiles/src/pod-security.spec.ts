import { describe, expect, it } from 'vitest';
import { agentProfileSchema, type AgentProfileInput } from './profile-schema.js';
import { agentPodSecurityLevel, meetsPodSecurity, parsePodSecurityLevel, podSecurityCelRules, podSecurityOptOut, type PodSecurityLevel } from './pod-security.js';
import { referenceProfile } from './reference-profile.js';
import { RESTRICTED_SECURITY_CONTEXT } from './testing/fixtures.js';

type SecurityContext = NonNullable<AgentProfileInput['container']['securityContext']>;

function profile(securityContext: SecurityContext | undefined, optOut?: 'baseline' | 'privileged'): AgentProfileInput {
  return {
    name: 'agent',
    annotationPrefix: 'agent.example.com/',
    container: { name: 'agent', image: 'registry.example.com/agent:1', ...(securityContext ? { securityContext } : {}) },
    ...(optOut ? { dangerouslyAllowPodSecurity: optOut } : {}),
  };
}

/** The restricted context with some fields changed (undefined removes one). */
function restrictedWith(changes: Record<string, unknown>): SecurityContext {
  const context: Record<string, unknown> = { ...structuredClone(RESTRICTED_SECURITY_CONTEXT), ...changes };
  for (const [key, value] of Object.entries(changes)) if (value === undefined) delete context[key];
  return context as SecurityContext;
}

/** The problems the schema reports, as `field: message`. */
function problems(input: AgentProfileInput): string[] {
  const parsed = agentProfileSchema.safeParse(input);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('agentPodSecurityLevel', () => {
  it('is restricted for the reference profile and for the least restricted context', () => {
    expect(agentPodSecurityLevel(referenceProfile())).toBe('restricted');
    expect(agentPodSecurityLevel({ container: { securityContext: RESTRICTED_SECURITY_CONTEXT } })).toBe('restricted');
    expect(agentPodSecurityLevel({ container: { securityContext: restrictedWith({ capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } }) } })).toBe('restricted');
    expect(agentPodSecurityLevel({ container: { securityContext: restrictedWith({ seccompProfile: { type: 'Localhost' }, seLinuxOptions: { type: 'container_t', level: 's0:c1,c2' } }) } })).toBe('restricted');
  });

  it.each<[string, SecurityContext | undefined]>([
    ['no securityContext', undefined],
    ['privilege escalation allowed', restrictedWith({ allowPrivilegeEscalation: true })],
    ['runAsNonRoot unset', restrictedWith({ runAsNonRoot: undefined })],
    ['root user', restrictedWith({ runAsUser: 0 })],
    ['no seccomp profile', restrictedWith({ seccompProfile: undefined })],
    ['capabilities not dropped', restrictedWith({ capabilities: { drop: ['NET_RAW'] } })],
    ['a default capability added', restrictedWith({ capabilities: { drop: ['ALL'], add: ['CHOWN'] } })],
  ])('is baseline with %s', (_name, securityContext) => {
    expect(agentPodSecurityLevel({ container: { securityContext } })).toBe('baseline');
  });

  it.each<[string, SecurityContext]>([
    ['privileged', restrictedWith({ privileged: true })],
    ['SYS_ADMIN added', restrictedWith({ capabilities: { drop: ['ALL'], add: ['SYS_ADMIN'] } })],
    ['seccomp Unconfined', restrictedWith({ seccompProfile: { type: 'Unconfined' } })],
    ['AppArmor Unconfined', restrictedWith({ appArmorProfile: { type: 'Unconfined' } })],
    ['a Windows host process', restrictedWith({ windowsOptions: { hostProcess: true } })],
    ['an SELinux type of its own', restrictedWith({ seLinuxOptions: { type: 'spc_t' } })],
    ['an SELinux user', restrictedWith({ seLinuxOptions: { user: 'system_u' } })],
    ['an SELinux role', restrictedWith({ seLinuxOptions: { role: 'system_r' } })],
    ['an unmasked /proc', restrictedWith({ procMount: 'Unmasked' })],
  ])('is privileged with %s', (_name, securityContext) => {
    expect(agentPodSecurityLevel({ container: { securityContext } })).toBe('privileged');
  });
});

describe('the floor in the profile schema', () => {
  it('accepts a restricted agent, and refuses one below restricted field by field, naming the opt-out', () => {
    expect(problems(profile(RESTRICTED_SECURITY_CONTEXT))).toEqual([]);
    expect(problems(profile(undefined))).toEqual([
      'container.securityContext.allowPrivilegeEscalation: must be false (Pod Security restricted; only spec.dangerouslyAllowPodSecurity: baseline accepts less)',
      'container.securityContext.runAsNonRoot: must be true (Pod Security restricted; only spec.dangerouslyAllowPodSecurity: baseline accepts less)',
      'container.securityContext.seccompProfile.type: must be RuntimeDefault or Localhost (Pod Security restricted; only spec.dangerouslyAllowPodSecurity: baseline accepts less)',
      'container.securityContext.capabilities.drop: must include ALL (Pod Security restricted; only spec.dangerouslyAllowPodSecurity: baseline accepts less)',
    ]);
  });

  it('lets dangerouslyAllowPodSecurity accept exactly the level it names', () => {
    expect(problems(profile(undefined, 'baseline'))).toEqual([]);
    expect(problems(profile(restrictedWith({ privileged: true }), 'baseline'))).toEqual([
      'container.securityContext.privileged: must not be true (Pod Security baseline; only spec.dangerouslyAllowPodSecurity: privileged accepts less)',
    ]);
    expect(problems(profile(restrictedWith({ privileged: true, capabilities: { add: ['SYS_ADMIN'] } }), 'privileged'))).toEqual([]);
    expect(problems({ ...profile(RESTRICTED_SECURITY_CONTEXT), dangerouslyAllowPodSecurity: 'restricted' } as unknown as AgentProfileInput)).toHaveLength(1);
  });

  it('has a CEL rule for the CRD beside every check, at the same field and with the same message', () => {
    const rules = podSecurityCelRules();
    expect(rules.map((r) => r.fieldPath)).toContain('.container.securityContext.allowPrivilegeEscalation');
    for (const rule of rules) expect(rule.rule).toMatch(/^(has\(self\.dangerouslyAllowPodSecurity\)|\(has\(self\.dangerouslyAllowPodSecurity\) && self\.dangerouslyAllowPodSecurity == 'privileged'\)) \|\| \(/);
    const zodMessages = problems(profile(undefined)).map((line) => line.slice(line.indexOf(': ') + 2));
    for (const message of zodMessages) expect(rules.map((r) => r.message)).toContain(message);
  });

  it('makes the services warn about a profile accepted below restricted', () => {
    expect(podSecurityOptOut(referenceProfile())).toEqual([]);
    const baseline = agentProfileSchema.parse(profile(undefined, 'baseline'));
    expect(podSecurityOptOut(baseline)).toEqual([
      'profile agent: spec.dangerouslyAllowPodSecurity accepts an agent that meets only the baseline Pod Security level; pods in namespaces that enforce a stricter level are refused',
    ]);
  });
});

describe('meetsPodSecurity and parsePodSecurityLevel', () => {
  it('passes an agent where the enforced level is its own or weaker', () => {
    const levels: PodSecurityLevel[] = ['restricted', 'baseline', 'privileged'];
    const passes = levels.flatMap((agent) => levels.filter((enforced) => meetsPodSecurity(agent, enforced)).map((enforced) => `${agent} in ${enforced}`));
    expect(passes).toEqual(['restricted in restricted', 'restricted in baseline', 'restricted in privileged', 'baseline in baseline', 'baseline in privileged', 'privileged in privileged']);
  });

  it('reads only the three level names, as Pod Security admission does', () => {
    expect(['restricted', 'baseline', 'privileged', 'Restricted', '', undefined].map(parsePodSecurityLevel)).toEqual(['restricted', 'baseline', 'privileged', undefined, undefined, undefined]);
  });
});
