import { arrayMember, isJsonObject, type JsonObject, member, objectMember, stringMember } from '@outrigger/admission';
import type { AgentProfile } from '@outrigger/agent-profiles';
import { foreignVolumeMount } from './agent-pod-parts.js';
import { agentToken } from './agent-token.js';
import { containerNames } from './injection-status.js';
import { AGENT_TOKEN_VOLUME } from './service-account-token.js';

/** An opted-in pod in which the agent's token would not be the agent's alone: refused, never bound. */
export const AGENT_TOKEN_SHARED_REASON = 'agent-token-shared';

/**
 * Why the agent's token would not be the agent's alone in this pod (whose own token the injector
 * took away), or undefined: the pod mounts no token of its own, only agents (`isAgent`) mount the
 * agent's volume, no other volume projects a ServiceAccount token (a pod author may write one), and
 * no container (an ephemeral one included) can reach the agent's files through a shared process
 * namespace, the pod's or the node's.
 */
export function tokenConfinementProblem(spec: JsonObject, isAgent: (container: string) => boolean): string | undefined {
  if (member(spec, 'automountServiceAccountToken') !== false) return 'spec.automountServiceAccountToken is not false: the pod keeps its own token';
  if (member(spec, 'shareProcessNamespace') === true) return "spec.shareProcessNamespace is true: other containers could read the agent's token";
  if (member(spec, 'hostPID') === true) return "spec.hostPID is true: other containers could read the agent's token through the node's processes";
  for (const volume of arrayMember(spec, 'volumes') ?? []) {
    if (!isJsonObject(volume) || stringMember(volume, 'name') === AGENT_TOKEN_VOLUME) continue;
    const credential = projectedCredential(volume);
    if (credential !== undefined) return `volume ${String(stringMember(volume, 'name'))} projects ${credential} besides the agent's token`;
  }
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const container of arrayMember(spec, list) ?? []) {
      if (!isJsonObject(container)) continue;
      const name = stringMember(container, 'name') ?? '';
      const mounts = (arrayMember(container, 'volumeMounts') ?? []).some((m) => isJsonObject(m) && stringMember(m, 'name') === AGENT_TOKEN_VOLUME);
      if (mounts && !isAgent(name)) return `container ${name} mounts ${AGENT_TOKEN_VOLUME}, the agent's token volume`;
      // A debug container added later (kubectl debug --target) shares the target's process namespace, and so its files.
      const target = stringMember(container, 'targetContainerName');
      if (list === 'ephemeralContainers' && target !== undefined && isAgent(target)) return `ephemeral container ${name} targets the agent's container ${target}: it could read the agent's token`;
    }
  }
  return undefined;
}

/**
 * What in a projected volume could authenticate as the pod's ServiceAccount: a token, or a pod
 * certificate from a built-in (`kubernetes.io/`) signer, which the API server may accept for it.
 */
function projectedCredential(volume: JsonObject): string | undefined {
  const projected = objectMember(volume, 'projected');
  for (const source of projected ? (arrayMember(projected, 'sources') ?? []) : []) {
    if (!isJsonObject(source)) continue;
    if (member(source, 'serviceAccountToken') !== undefined) return 'a ServiceAccount token';
    const certificate = objectMember(source, 'podCertificate');
    const signer = certificate ? (stringMember(certificate, 'signerName') ?? '') : undefined;
    if (signer !== undefined && signer.startsWith('kubernetes.io/')) return `a pod certificate of built-in signer ${signer}`;
  }
  return undefined;
}

/**
 * For the webhook, on a pod whose tokens are prepared: why an agent of `pending` that must hold its
 * token alone would not (verifyInjectedAgent would then never let it be bound), naming the profile.
 */
export function sharedTokenProblem(pod: JsonObject, spec: JsonObject, pending: readonly AgentProfile[], agentNames: ReadonlySet<string>): string | undefined {
  for (const profile of pending) {
    const token = agentToken(profile, pod);
    if ('type' in token || !token.podTokenRemoved) continue;
    const problem = tokenConfinementProblem(spec, (name) => agentNames.has(name));
    if (problem !== undefined) return `profile ${profile.name} gives the API token to its agent alone (spec.serviceAccountToken.agentOnly), but ${problem}; remove that from the pod`;
  }
  return undefined;
}

/**
 * For the rbac-syncer, on a pod whose agent of `profile` does not verify: why the agent's token,
 * given to the agent alone when it was injected (the pod's own turned off, the agent's token
 * volume in place), is no longer the agent's alone (a container added later mounts it or one of the
 * agent's volumes, or targets the agent), or undefined. `agentNames`: every agent in force, which
 * may share the token volume. Such a pod's ServiceAccount is bound by none of its pods.
 */
export function sharedAgentToken(pod: JsonObject, profile: AgentProfile, agentNames: ReadonlySet<string>): string | undefined {
  const spec = objectMember(pod, 'spec');
  if (!spec || member(spec, 'automountServiceAccountToken') !== false) return undefined;
  const agents = [...containerNames(pod, 'containers'), ...containerNames(pod, 'initContainers')].filter((name) => agentNames.has(name));
  if (!agents.includes(profile.container.name)) return undefined;
  if (!(arrayMember(spec, 'volumes') ?? []).some((volume) => isJsonObject(volume) && stringMember(volume, 'name') === AGENT_TOKEN_VOLUME)) return undefined;
  // Named like an agent counts only where agents are injected: an ephemeral container may take any free name.
  return tokenConfinementProblem(spec, (name) => agents.includes(name)) ?? foreignVolumeMount(spec, profile);
}
