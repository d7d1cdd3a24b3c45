import { AGENT_PROFILE_API_VERSION, AGENT_PROFILE_PLURAL, type AgentProfile, agentVariants, parseAgentProfile, profileAppliesIn, PROFILE_LABEL, profileHash } from '@outrigger/agent-profiles';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, isJsonObject, type JsonObject, protectedNamespacesFor } from '@outrigger/admission';
import { INSTALL_NAMES } from '@outrigger/install';
import { controllerOf, isNotFound, type KubeClient, type KubeObject, kubeJson, listPages, parseDuration, resourcePath } from '@outrigger/kube';
import {
  type AgentRevision,
  type AgentState,
  agentState,
  parseAgentRevision,
  podAnnotations,
  podCreatedMs,
  requestedProfiles,
  type RevisionLookup,
  SPEC_CHANGE_LAG,
  specsWhenCreated,
  type StoredRevision,
} from '@outrigger/sidecar';
import { UsageError } from '../command-io.js';
import { AgentReport, type WorkloadAgents } from './agent-report.js';
import { type ControllerLookup, type OwnerRef, resolveWorkload } from './workload-owner.js';

export interface AgentScanOptions {
  /** The pods' namespace; all namespaces when undefined. */
  readonly namespace: string | undefined;
  /** Only this profile; every profile when undefined. */
  readonly profile: string | undefined;
  /** Where the rbac-syncer keeps the earlier specs (ControllerRevisions). */
  readonly installNamespace: string;
  readonly pageSize?: number;
  /** After each page of pods: pods looked at, and the controllers (or bare pods) of the opted-in ones. */
  readonly onProgress?: (pods: number, owners: number) => void;
}

export interface ProfileInForce {
  readonly name: string;
  readonly hash: string;
  /** When the spec in force was first stored by the rbac-syncer (its ControllerRevision's creation); undefined when it is not stored. */
  readonly since: Date | undefined;
}

/** The rbac-syncer's SPEC_CHANGE_LAG, by which an earlier spec's agent counts as injected (and bound) only in pods created while it was in force or that long after. */
export interface SpecChangeLag {
  readonly ms: number;
  /** What it is and where it was read (the Deployment's setting, or the default and why). */
  readonly from: string;
}

export interface AgentScan {
  readonly profiles: readonly ProfileInForce[];
  readonly specChangeLag: SpecChangeLag;
  /** AgentProfiles this version refuses, with why: their pods are not judged. */
  readonly refused: readonly { readonly name: string; readonly error: string }[];
  /** Live opted-in pods looked at. */
  readonly pods: number;
  readonly rows: readonly WorkloadAgents[];
}

const TERMINAL_PHASES = new Set(['Succeeded', 'Failed']);
const OWNER_RESOURCES: Readonly<Record<string, string>> = { ReplicaSet: 'replicasets', Job: 'jobs' };

/**
 * Reads every live pod that opted into a profile, in the namespaces that take part (labelled, not a
 * system one: where the webhook injects, as the rbac-syncer counts), a page at a time, and tallies
 * its agent state per workload: what stays in memory is the agent states of those pods, grouped by
 * controller, then one entry per workload (and per ReplicaSet or Job looked up).
 */
export async function scanAgents(kc: KubeClient, options: AgentScanOptions): Promise<AgentScan> {
  const profileObjs = await kubeJson<{ items?: unknown[] }>(kc, { path: resourcePath({ apiVersion: AGENT_PROFILE_API_VERSION, resource: AGENT_PROFILE_PLURAL }) });
  const inForce: AgentProfile[] = [];
  const refused: { name: string; error: string }[] = [];
  for (const obj of profileObjs.items ?? []) {
    const parsed = parseAgentProfile(obj);
    if (parsed.ok) inForce.push(parsed.value);
    else refused.push({ name: String((obj as { metadata?: { name?: unknown } }).metadata?.name), error: parsed.error.split('\n').join('; ') });
  }
  if (options.profile !== undefined && !inForce.some((p) => p.name === options.profile)) {
    throw new UsageError(`--profile ${options.profile}: no such AgentProfile in force (in force: ${inForce.map((p) => p.name).join(', ') || 'none'})`);
  }
  const taking = await takingPart(kc, options.installNamespace);
  if (options.namespace !== undefined && !taking.has(options.namespace)) {
    throw new UsageError(`namespace ${options.namespace} does not take part (not labelled ${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}, or a system namespace): its pods get no agent`);
  }
  const judged = inForce.filter((p) => options.profile === undefined || p.name === options.profile);
  const stored = await readRevisions(kc, options.installNamespace);
  const storedRevision: StoredRevision = (profile, hash) => stored.get(`${profile} ${hash}`)?.revision;
  const specChangeLag = await readSpecChangeLag(kc, options.installNamespace);
  // The agent everyone gets: while a profile stages a change, the spec without its canary.
  const profiles = judged.map((p) => {
    const hash = profileHash(agentVariants(p).stable);
    return { name: p.name, hash, since: stored.get(`${p.name} ${hash}`)?.created };
  });
  const report = new AgentReport(new Map(profiles.map((p) => [p.name, p.hash])), (profile, hash) => storedRevision(profile, hash) !== undefined);
  const lookup = cachedControllerLookup(kc);

  let pods = 0;
  let seen = 0;
  const pageSize = options.pageSize ?? 500;
  // The list is read first, its pods' agent states grouped by controller; the controllers are looked
  // up once it is read, so that lookups never outlast the list's continue token (410 Gone).
  const byController = new Map<string, { namespace: string; pod: string; controller: OwnerRef | undefined; states: PodState[] }>();
  await listPages(kc, resourcePath({ apiVersion: 'v1', resource: 'pods', namespace: options.namespace }), { pageSize }, (pod) => {
    if (++seen % pageSize === 0) options.onProgress?.(seen, byController.size);
    const metadata = (pod as JsonObject)['metadata'] as JsonObject;
    const namespace = String(metadata['namespace']);
    const labels = taking.get(namespace);
    if (!labels) return;
    const earlier = specsWhenCreated(storedRevision, podCreatedMs(pod as JsonObject), specChangeLag.ms);
    const states = podStates(pod as JsonObject, inForce, judged.filter((p) => profileAppliesIn(p, labels)), earlier);
    if (states.length === 0) return;
    pods++;
    const controller = controllerOf(pod as KubeObject);
    const key = controller ? `${namespace}/${controller.kind}/${controller.name}` : `${namespace}/Pod/${String(metadata['name'])}`;
    const group = byController.get(key);
    if (group) group.states.push(...states);
    else byController.set(key, { namespace, pod: String(metadata['name']), controller, states });
  });
  for (const group of byController.values()) {
    const workload = await resolveWorkload(group.namespace, group.pod, group.controller, lookup);
    for (const { profile, state } of group.states) report.add(workload, profile, state);
  }
  options.onProgress?.(seen, byController.size);
  return { profiles, specChangeLag, refused, pods, rows: report.rows() };
}

interface PodState {
  readonly profile: string;
  readonly state: AgentState;
}

/** The agent state of each judged profile a live pod opted into; none for a pod that did not, is going away or has finished. */
function podStates(pod: JsonObject, inForce: readonly AgentProfile[], judged: readonly AgentProfile[], revisions: RevisionLookup): PodState[] {
  const metadata = isJsonObject(pod['metadata']) ? pod['metadata'] : {};
  const status = isJsonObject(pod['status']) ? pod['status'] : {};
  if (typeof metadata['deletionTimestamp'] === 'string') return [];
  if (typeof status['phase'] === 'string' && TERMINAL_PHASES.has(status['phase'])) return [];
  const requested = requestedProfiles(podAnnotations(pod), inForce);
  if (requested.type !== 'requested') return [];
  return requested.profiles.filter((p) => judged.includes(p)).map((p) => ({ profile: p.name, state: agentState(pod, p, inForce, revisions) }));
}

/** The namespaces the webhook injects in (labelled, and not one it never touches), with their labels (where a scoped profile applies). */
async function takingPart(kc: KubeClient, installNamespace: string): Promise<Map<string, Readonly<Record<string, string>>>> {
  const excluded = new Set(protectedNamespacesFor(installNamespace));
  const taking = new Map<string, Readonly<Record<string, string>>>();
  await listPages(kc, resourcePath({ apiVersion: 'v1', resource: 'namespaces' }), { labelSelector: `${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}` }, (ns) => {
    const name = ns.metadata?.name;
    if (name && !excluded.has(name)) taking.set(name, ns.metadata?.labels ?? {});
  });
  return taking;
}

/** The stored specs by `profile hash`, with when each was stored; none when they cannot be read (outdated agents are then all unverified). */
async function readRevisions(kc: KubeClient, namespace: string): Promise<Map<string, { revision: AgentRevision; created: Date | undefined }>> {
  const stored = new Map<string, { revision: AgentRevision; created: Date | undefined }>();
  const list = await kubeJson<{ items?: unknown[] }>(kc, {
    path: resourcePath({ apiVersion: 'apps/v1', resource: 'controllerrevisions', namespace }),
    query: { labelSelector: PROFILE_LABEL },
  }).catch((error: unknown) => {
    if (isNotFound(error)) return { items: [] };
    throw error;
  });
  for (const obj of list.items ?? []) {
    const revision = parseAgentRevision(obj);
    const created = (obj as { metadata?: { creationTimestamp?: unknown } }).metadata?.creationTimestamp;
    if (revision) stored.set(`${revision.profile.name} ${revision.hash}`, { revision, created: typeof created === 'string' ? new Date(created) : undefined });
  }
  return stored;
}

/** SPEC_CHANGE_LAG as the rbac-syncer's Deployment sets it; its default where the Deployment sets none or is not there. */
async function readSpecChangeLag(kc: KubeClient, namespace: string): Promise<SpecChangeLag> {
  const name = INSTALL_NAMES.rbacSyncer;
  const fallback = (why: string): SpecChangeLag => ({ ms: parseDuration(SPEC_CHANGE_LAG.fallback), from: `the default ${SPEC_CHANGE_LAG.setting} of ${SPEC_CHANGE_LAG.fallback} (${why})` });
  const deployment = await kubeJson<KubeObject & { spec?: { template?: { spec?: { containers?: { env?: { name?: string; value?: string; valueFrom?: unknown }[] }[] } } } }>(kc, {
    path: resourcePath({ apiVersion: 'apps/v1', resource: 'deployments', namespace, name }),
  }).catch((error: unknown) => {
    if (isNotFound(error)) return undefined;
    throw error;
  });
  if (!deployment) return fallback(`no Deployment ${namespace}/${name}`);
  const setting = (deployment.spec?.template?.spec?.containers ?? []).flatMap((c) => c.env ?? []).find((e) => e.name === SPEC_CHANGE_LAG.setting);
  if (!setting || setting.value === undefined || setting.value.trim() === '') {
    return setting?.valueFrom !== undefined ? fallback(`Deployment ${namespace}/${name} sets ${SPEC_CHANGE_LAG.setting} from another object`) : fallback(`Deployment ${namespace}/${name} does not set ${SPEC_CHANGE_LAG.setting}`);
  }
  try {
    return { ms: parseDuration(setting.value), from: `${SPEC_CHANGE_LAG.setting}=${setting.value} on Deployment ${namespace}/${name}` };
  } catch (error) {
    throw new Error(`Deployment ${namespace}/${name}: ${SPEC_CHANGE_LAG.setting}: ${(error as Error).message}`);
  }
}

/** A ReplicaSet's or Job's controller, read once per object (their pods share it). */
function cachedControllerLookup(kc: KubeClient): ControllerLookup {
  const cache = new Map<string, Promise<OwnerRef | undefined>>();
  return (namespace, owner) => {
    const key = `${namespace}/${owner.kind}/${owner.name}`;
    let found = cache.get(key);
    if (!found) {
      const resource = OWNER_RESOURCES[owner.kind] ?? `${owner.kind.toLowerCase()}s`;
      found = kubeJson<KubeObject>(kc, { path: resourcePath({ apiVersion: owner.apiVersion, resource, namespace, name: owner.name }) }).then(controllerOf, (error: unknown) => {
        if (isNotFound(error)) return undefined;
        throw error;
      });
      cache.set(key, found);
    }
    return found;
  };
}
