import { isJsonObject, type JsonObject } from '@outrigger/admission';
import { type AgentProfile } from '@outrigger/agent-profiles';
import { agentIsBindable, agentState, podAnnotations, requestedProfiles, type RevisionLookup } from '@outrigger/sidecar';

/**
 * All the syncer keeps of a pod: enough to know whose ServiceAccount needs which profile. No name:
 * the pods of one ServiceAccount then look alike and share one PodView (see podViewKey).
 */
export interface PodView {
  readonly namespace: string;
  readonly serviceAccount: string;
  /** Names of the profiles (with RBAC) the pod opted into and carries the injected agent of, sorted. */
  readonly profiles: readonly string[];
  /** metadata.deletionTimestamp is set: the pod is going away. */
  readonly deleting: boolean;
}

const TERMINAL_PHASES = new Set(['Succeeded', 'Failed']);

/**
 * Projects a raw pod (as the reflector hands it over) to a PodView, or undefined when the pod does
 * not matter: it opted into no profile with RBAC, its annotations are invalid (the webhook denies
 * such pods), it has finished (Succeeded/Failed pods run no agent), or it does not carry the agent
 * exactly as the injector renders it for this pod, from the profile in force or the earlier spec
 * its status annotation names (annotations alone never bind, nor does any container the injector
 * did not write: another image, tag, command, securityContext, mount...).
 */
export function projectPod(pod: JsonObject, profiles: readonly AgentProfile[], revisions: RevisionLookup = () => undefined): PodView | undefined {
  const metadata = isJsonObject(pod['metadata']) ? pod['metadata'] : {};
  const spec = isJsonObject(pod['spec']) ? pod['spec'] : {};
  const status = isJsonObject(pod['status']) ? pod['status'] : {};
  const namespace = typeof metadata['namespace'] === 'string' ? metadata['namespace'] : undefined;
  const name = typeof metadata['name'] === 'string' ? metadata['name'] : undefined;
  if (!namespace || !name) return undefined;
  if (typeof status['phase'] === 'string' && TERMINAL_PHASES.has(status['phase'])) return undefined;
  const annotations = podAnnotations(pod);
  const requested = requestedProfiles(annotations, profiles);
  if (requested.type !== 'requested') return undefined;
  const names = requested.profiles
    .filter((p) => p.rbac && agentIsBindable(agentState(pod, p, profiles, revisions)))
    .map((p) => p.name)
    .sort();
  if (names.length === 0) return undefined;
  const sa = spec['serviceAccountName'];
  return {
    namespace,
    serviceAccount: typeof sa === 'string' && sa !== '' ? sa : 'default',
    profiles: names,
    deleting: typeof metadata['deletionTimestamp'] === 'string',
  };
}

/** Equal PodViews, and only those, have equal keys. */
export function podViewKey(view: PodView): string {
  return `${view.deleting ? 'deleting' : 'live'} ${view.namespace}/${view.serviceAccount} ${view.profiles.join(',')}`;
}

export function samePodView(a: PodView, b: PodView): boolean {
  return podViewKey(a) === podViewKey(b);
}
