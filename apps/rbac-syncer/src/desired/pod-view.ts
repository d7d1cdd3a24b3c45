import { isJsonObject, type JsonObject } from '@outrigger/admission';
import { type AgentProfile } from '@outrigger/agent-profiles';
import { agentIsBindable, agentState, type AgentStateName, podAnnotations, podCreatedMs, requestedProfiles, sharedAgentToken, specsWhenCreated, type StoredRevision } from '@outrigger/sidecar';
import { controllerOf, type ControllerRef, KUBE_PROTOBUF_SCHEMA, sharingMessages, withoutFields } from '@outrigger/kube';

/** What a pod runs of one profile it opted into (see agentState); `hash` names the earlier spec of an outdated agent. */
export interface PodAgent {
  readonly profile: string;
  readonly state: AgentStateName;
  readonly hash?: string;
  /** A current agent of the profile's staged change. */
  readonly canary?: true;
}

/**
 * All the syncer keeps of a pod: enough to know whose ServiceAccount needs which profile, and
 * which agents run. No name: the pods of one ServiceAccount then look alike and share one PodView
 * (see podViewKey).
 */
export interface PodView {
  readonly namespace: string;
  readonly serviceAccount: string;
  /** Names of the profiles (with RBAC) the pod opted into and carries the injected agent of, sorted. */
  readonly profiles: readonly string[];
  /** Names of the profiles (with RBAC) whose agent's token, the agent's alone when injected, other containers of the pod can now reach, sorted: its ServiceAccount is bound for none of them. */
  readonly sharesToken: readonly string[];
  /** Every profile in force the pod opted into, with what it runs of it, sorted by profile. */
  readonly agents: readonly PodAgent[];
  /** Only while an agent is missing: whose pods they are. */
  readonly owner?: ControllerRef;
  /** metadata.deletionTimestamp is set: the pod is going away. */
  readonly deleting: boolean;
}

const TERMINAL_PHASES = new Set(['Succeeded', 'Failed']);

/**
 * Pods in protobuf, without what projectPod never reads (of the status only the phase): skipped
 * unread. A workload's pods carry byte-equal containers and volumes: each is decoded once.
 */
export const POD_PROTOBUF_SCHEMA = sharingMessages(
  withoutFields(KUBE_PROTOBUF_SCHEMA, [
    'metav1.ObjectMeta.managedFields',
    'v1.PodStatus.conditions',
    'v1.PodStatus.containerStatuses',
    'v1.PodStatus.initContainerStatuses',
    'v1.PodStatus.ephemeralContainerStatuses',
    'v1.PodStatus.resourceClaimStatuses',
  ]),
  ['v1.Container', 'v1.Volume'],
);

export interface EarlierSpecs {
  readonly revisions: StoredRevision;
  /** How long after a spec was replaced the injector may still inject it (it has not seen the edit yet). */
  readonly lagMs: number;
}

/**
 * Projects a raw pod (as the reflector hands it over) to a PodView, or undefined when the pod does
 * not matter: it opted into no profile in force, its annotations are invalid (the webhook denies
 * such pods), or it has finished (Succeeded/Failed pods run no agent). A profile is among
 * `profiles` (binds) only when `binds` says it may and the pod carries its agent exactly as the
 * injector renders it for this pod, from the profile in force or the earlier spec its status
 * annotation names, if the pod was created while that spec was in force (annotations alone never
 * bind, nor does any container the injector did not write: another image, tag, command,
 * securityContext, mount...).
 */
export function projectPod(
  pod: JsonObject,
  inForce: readonly AgentProfile[],
  earlier: EarlierSpecs = { revisions: () => undefined, lagMs: 0 },
  binds: (profile: AgentProfile) => boolean = (profile) => profile.rbac !== undefined,
): PodView | undefined {
  const metadata = isJsonObject(pod['metadata']) ? pod['metadata'] : {};
  const spec = isJsonObject(pod['spec']) ? pod['spec'] : {};
  const status = isJsonObject(pod['status']) ? pod['status'] : {};
  const namespace = typeof metadata['namespace'] === 'string' ? metadata['namespace'] : undefined;
  const name = typeof metadata['name'] === 'string' ? metadata['name'] : undefined;
  if (!namespace || !name) return undefined;
  if (typeof status['phase'] === 'string' && TERMINAL_PHASES.has(status['phase'])) return undefined;
  const requested = requestedProfiles(podAnnotations(pod), inForce);
  if (requested.type !== 'requested' || requested.profiles.length === 0) return undefined;
  const profiles: string[] = [];
  const sharesToken: string[] = [];
  const agents: PodAgent[] = [];
  const earlierSpec = specsWhenCreated(earlier.revisions, podCreatedMs(pod), earlier.lagMs);
  for (const profile of requested.profiles) {
    const state = agentState(pod, profile, inForce, earlierSpec);
    if (binds(profile) && agentIsBindable(state)) profiles.push(profile.name);
    // A verified agent holds its token alone, so only an agent that does not verify can share it.
    else if (binds(profile) && sharedAgentToken(pod, profile, new Set(inForce.map((p) => p.container.name))) !== undefined) sharesToken.push(profile.name);
    const detail = state.state === 'outdated' && state.hash !== undefined ? { hash: state.hash } : state.state === 'current' && state.canary ? { canary: true as const } : {};
    agents.push({ profile: profile.name, state: state.state, ...detail });
  }
  const sa = spec['serviceAccountName'];
  const owner = agents.some((a) => a.state === 'missing') ? controllerOf({ metadata }) : undefined;
  // Sorted copies sized to their contents: an array grown by push keeps spare room, and views live as long as their pods.
  return {
    namespace,
    serviceAccount: typeof sa === 'string' && sa !== '' ? sa : 'default',
    profiles: profiles.toSorted(),
    sharesToken: sharesToken.toSorted(),
    agents: agents.toSorted((a, b) => (a.profile < b.profile ? -1 : 1)),
    ...(owner ? { owner } : {}),
    deleting: typeof metadata['deletionTimestamp'] === 'string',
  };
}

/** Equal PodViews, and only those, have equal keys. */
export function podViewKey(view: PodView): string {
  const agents = view.agents.map((a) => `${a.profile}=${a.state}${a.hash ? `@${a.hash}` : ''}${a.canary ? '+canary' : ''}`).join(',');
  const owner = view.owner ? ` ${view.owner.apiVersion}/${view.owner.kind}/${view.owner.name}/${view.owner.uid}` : '';
  return `${view.deleting ? 'deleting' : 'live'} ${view.namespace}/${view.serviceAccount} ${view.profiles.join(',')} ${view.sharesToken.join(',')} ${agents}${owner}`;
}

export function samePodView(a: PodView, b: PodView): boolean {
  return podViewKey(a) === podViewKey(b);
}
