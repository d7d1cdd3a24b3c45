import type { z } from 'zod';
import { celRule, celString, type CelRule } from './crd-meta.js';

/**
 * The Pod Security Standards' rules that concern one container's own fields
 * (https://kubernetes.io/docs/concepts/security/pod-security-standards/), applied to the agent:
 * the level it meets, and the floor a profile must reach unless `dangerouslyAllowPodSecurity`
 * accepts a weaker level. Pod-level rules (host namespaces, sysctls) are the pod's, except the
 * volumes the agent brings: a hostPath volume is below baseline.
 */

/** Strictest first, as Pod Security orders them. */
export const POD_SECURITY_LEVELS = ['restricted', 'baseline', 'privileged'] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];

/** The profile field that accepts an agent below `restricted`. */
export const POD_SECURITY_OPT_OUT_FIELD = 'dangerouslyAllowPodSecurity';

/** The namespace label by which Pod Security admission refuses pods below its level. */
export const POD_SECURITY_ENFORCE_LABEL = 'pod-security.kubernetes.io/enforce';

/** Capabilities baseline lets a container add (Docker's default set). */
const BASELINE_CAPABILITIES = ['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT'];
const RESTRICTED_CAPABILITIES = ['NET_BIND_SERVICE'];
const SELINUX_TYPES = ['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'];

/** The securityContext fields the rules read (structural, so the schema can use the rules). */
interface SecurityContext {
  readonly privileged?: boolean | undefined;
  readonly allowPrivilegeEscalation?: boolean | undefined;
  readonly runAsNonRoot?: boolean | undefined;
  readonly runAsUser?: number | undefined;
  readonly capabilities?: { readonly add?: readonly string[] | undefined; readonly drop?: readonly string[] | undefined } | undefined;
  readonly seccompProfile?: { readonly type: string } | undefined;
  readonly appArmorProfile?: { readonly type: string } | undefined;
  readonly seLinuxOptions?: { readonly user?: string | undefined; readonly role?: string | undefined; readonly type?: string | undefined } | undefined;
  readonly windowsOptions?: { readonly hostProcess?: boolean | undefined } | undefined;
  readonly procMount?: string | undefined;
}

/** What the level depends on: the agent's securityContext and the profile's opt-out. */
interface AgentSecurity {
  readonly container: { readonly securityContext?: SecurityContext | undefined };
  readonly volumes?: readonly { readonly hostPath?: unknown }[] | undefined;
  readonly [POD_SECURITY_OPT_OUT_FIELD]?: 'baseline' | 'privileged' | undefined;
}

/** One rule on a field of the container's securityContext, in TypeScript and in CEL (both true when it holds). */
interface ContainerRule {
  /** The weakest level that has the rule; stricter levels have it too. */
  readonly level: 'baseline' | 'restricted';
  readonly field: string;
  readonly requirement: string;
  readonly holds: (sc: SecurityContext) => boolean;
  readonly cel: string;
}

const SC = 'self.container.securityContext';

/** CEL: every step to `field` under the securityContext is set. */
function set(field: string): string {
  const steps = field.split('.');
  return [`has(${SC})`, ...steps.map((_, i) => `has(${SC}.${steps.slice(0, i + 1).join('.')})`)].join(' && ');
}

const list = (values: readonly string[]) => `[${values.map(celString).join(', ')}]`;

const RULES: readonly ContainerRule[] = [
  { level: 'baseline', field: 'privileged', requirement: 'must not be true', holds: (sc) => sc.privileged !== true, cel: `!(${set('privileged')}) || !${SC}.privileged` },
  {
    level: 'baseline',
    field: 'capabilities.add',
    requirement: `may add only ${BASELINE_CAPABILITIES.join(', ')}`,
    holds: (sc) => (sc.capabilities?.add ?? []).every((c) => BASELINE_CAPABILITIES.includes(c)),
    cel: `!(${set('capabilities.add')}) || ${SC}.capabilities.add.all(c, c in ${list(BASELINE_CAPABILITIES)})`,
  },
  { level: 'baseline', field: 'seccompProfile.type', requirement: 'must not be Unconfined', holds: (sc) => sc.seccompProfile?.type !== 'Unconfined', cel: `!(${set('seccompProfile')}) || ${SC}.seccompProfile.type != 'Unconfined'` },
  { level: 'baseline', field: 'appArmorProfile.type', requirement: 'must not be Unconfined', holds: (sc) => sc.appArmorProfile?.type !== 'Unconfined', cel: `!(${set('appArmorProfile')}) || ${SC}.appArmorProfile.type != 'Unconfined'` },
  { level: 'baseline', field: 'windowsOptions.hostProcess', requirement: 'must not be true', holds: (sc) => sc.windowsOptions?.hostProcess !== true, cel: `!(${set('windowsOptions.hostProcess')}) || !${SC}.windowsOptions.hostProcess` },
  {
    level: 'baseline',
    field: 'seLinuxOptions.type',
    requirement: `must be one of ${SELINUX_TYPES.filter(Boolean).join(', ')} (or unset)`,
    holds: (sc) => SELINUX_TYPES.includes(sc.seLinuxOptions?.type ?? ''),
    cel: `!(${set('seLinuxOptions.type')}) || ${SC}.seLinuxOptions.type in ${list(SELINUX_TYPES)}`,
  },
  { level: 'baseline', field: 'seLinuxOptions.user', requirement: 'must be unset', holds: (sc) => !sc.seLinuxOptions?.user, cel: `!(${set('seLinuxOptions.user')}) || ${SC}.seLinuxOptions.user == ''` },
  { level: 'baseline', field: 'seLinuxOptions.role', requirement: 'must be unset', holds: (sc) => !sc.seLinuxOptions?.role, cel: `!(${set('seLinuxOptions.role')}) || ${SC}.seLinuxOptions.role == ''` },
  { level: 'baseline', field: 'procMount', requirement: 'must be Default (or unset)', holds: (sc) => (sc.procMount ?? 'Default') === 'Default', cel: `!(${set('procMount')}) || ${SC}.procMount == 'Default'` },
  { level: 'restricted', field: 'allowPrivilegeEscalation', requirement: 'must be false', holds: (sc) => sc.allowPrivilegeEscalation === false, cel: `${set('allowPrivilegeEscalation')} && !${SC}.allowPrivilegeEscalation` },
  { level: 'restricted', field: 'runAsNonRoot', requirement: 'must be true', holds: (sc) => sc.runAsNonRoot === true, cel: `${set('runAsNonRoot')} && ${SC}.runAsNonRoot` },
  { level: 'restricted', field: 'runAsUser', requirement: 'must not be 0', holds: (sc) => sc.runAsUser !== 0, cel: `!(${set('runAsUser')}) || ${SC}.runAsUser != 0` },
  {
    level: 'restricted',
    field: 'seccompProfile.type',
    requirement: 'must be RuntimeDefault or Localhost',
    holds: (sc) => sc.seccompProfile?.type === 'RuntimeDefault' || sc.seccompProfile?.type === 'Localhost',
    cel: `${set('seccompProfile')} && ${SC}.seccompProfile.type in ['RuntimeDefault', 'Localhost']`,
  },
  { level: 'restricted', field: 'capabilities.drop', requirement: 'must include ALL', holds: (sc) => (sc.capabilities?.drop ?? []).includes('ALL'), cel: `${set('capabilities.drop')} && 'ALL' in ${SC}.capabilities.drop` },
  {
    level: 'restricted',
    field: 'capabilities.add',
    requirement: `may add only ${RESTRICTED_CAPABILITIES.join(', ')}`,
    holds: (sc) => (sc.capabilities?.add ?? []).every((c) => RESTRICTED_CAPABILITIES.includes(c)),
    cel: `!(${set('capabilities.add')}) || ${SC}.capabilities.add.all(c, c in ${list(RESTRICTED_CAPABILITIES)})`,
  },
];

/** Why a rule refuses a profile, naming the level and the one field that accepts less. */
function message(rule: ContainerRule): string {
  const weaker = rule.level === 'restricted' ? 'baseline' : 'privileged';
  return `${rule.requirement} (Pod Security ${rule.level}; only spec.${POD_SECURITY_OPT_OUT_FIELD}: ${weaker} accepts less)`;
}

/** The strictest level whose container rules the agent's securityContext meets. */
export function agentPodSecurityLevel(profile: Pick<AgentSecurity, 'container' | 'volumes'>): PodSecurityLevel {
  if (hostPathVolumes(profile).length > 0) return 'privileged';
  const sc = profile.container.securityContext ?? {};
  const broken = RULES.filter((rule) => !rule.holds(sc));
  if (broken.some((rule) => rule.level === 'baseline')) return 'privileged';
  return broken.length > 0 ? 'baseline' : 'restricted';
}

/** Whether an agent of level `agent` passes where `enforced` is enforced. */
export function meetsPodSecurity(agent: PodSecurityLevel, enforced: PodSecurityLevel): boolean {
  return POD_SECURITY_LEVELS.indexOf(agent) <= POD_SECURITY_LEVELS.indexOf(enforced);
}

/** A label value as a level; anything else (unset, a typo) is undefined, as Pod Security then applies its defaults. */
export function parsePodSecurityLevel(value: string | undefined): PodSecurityLevel | undefined {
  return POD_SECURITY_LEVELS.find((level) => level === value);
}

/** The level a profile must reach: restricted, unless its opt-out accepts a weaker one. */
export function podSecurityFloor(profile: Pick<AgentSecurity, typeof POD_SECURITY_OPT_OUT_FIELD>): PodSecurityLevel {
  return profile[POD_SECURITY_OPT_OUT_FIELD] ?? 'restricted';
}

/** zod: one issue per container rule the floor has and the agent breaks, at the field. */
export function refuseBelowPodSecurityFloor(profile: AgentSecurity, ctx: z.RefinementCtx): void {
  const floor = podSecurityFloor(profile);
  if (floor === 'privileged') return;
  for (const i of hostPathVolumes(profile)) ctx.addIssue({ code: 'custom', path: ['volumes', i, 'hostPath'], message: HOST_PATH_MESSAGE });
  const sc = profile.container.securityContext ?? {};
  for (const rule of RULES) {
    if ((floor === 'baseline' && rule.level === 'restricted') || rule.holds(sc)) continue;
    ctx.addIssue({ code: 'custom', path: ['container', 'securityContext', ...rule.field.split('.')], message: message(rule) });
  }
}

/** The same rules as CEL on the profile, for the CRD: each holds unless the opt-out accepts a weaker level. */
export function podSecurityCelRules(): CelRule[] {
  const optOut = `self.${POD_SECURITY_OPT_OUT_FIELD}`;
  const privileged = `(has(${optOut}) && ${optOut} == 'privileged')`;
  return [
    ...RULES.map((rule) => {
      const accepted = rule.level === 'restricted' ? `has(${optOut})` : privileged;
      return celRule(`${accepted} || (${rule.cel})`, message(rule), `.container.securityContext.${rule.field}`);
    }),
    celRule(`${privileged} || (!has(self.volumes) || self.volumes.all(v, !has(v.hostPath)))`, HOST_PATH_MESSAGE, '.volumes'),
  ];
}

const HOST_PATH_MESSAGE = `a hostPath volume is below Pod Security baseline (only spec.${POD_SECURITY_OPT_OUT_FIELD}: privileged accepts it)`;

function hostPathVolumes(profile: Pick<AgentSecurity, 'volumes'>): number[] {
  return (profile.volumes ?? []).flatMap((volume, i) => (volume.hostPath === undefined ? [] : [i]));
}

/** For the services' startup log: a profile whose agent is below restricted, by its opt-out. */
export function podSecurityOptOut(profile: Pick<AgentSecurity, 'container' | 'volumes'> & { readonly name: string }): string[] {
  const level = agentPodSecurityLevel(profile);
  if (level === 'restricted') return [];
  return [`profile ${profile.name}: spec.${POD_SECURITY_OPT_OUT_FIELD} accepts an agent that meets only the ${level} Pod Security level; pods in namespaces that enforce a stricter level are refused`];
}
