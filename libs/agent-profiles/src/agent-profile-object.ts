import YAML from 'yaml';
import { err, isJsonObject, ok, type Result } from '@outrigger/admission';
import { describeIssue } from './format-issues.js';
import { agentProfileSchema, type AgentProfile } from './profile-schema.js';

export const AGENT_PROFILE_API_VERSION = 'outrigger.dev/v1alpha1';
export const AGENT_PROFILE_KIND = 'AgentProfile';

/** What a controller keeps of an AgentProfile object: its identity and the verdict on its spec. */
export interface AgentProfileEntry {
  readonly name: string;
  readonly generation: number;
  /** metadata.creationTimestamp; the older of two conflicting profiles wins. */
  readonly createdAt: string;
  readonly profile: Result<AgentProfile>;
}

/**
 * Turns one AgentProfile object (from the API or a file) into a typed profile. The spec is checked
 * by the same schema the API server's CRD was generated from, plus what only code can check;
 * problems name the field, e.g. `spec.parameters[1].pattern: is not an RE2 regular expression (…)`.
 */
export function parseAgentProfile(obj: unknown): Result<AgentProfile> {
  if (!isJsonObject(obj)) return err('is not an object');
  if (obj['apiVersion'] !== undefined && obj['apiVersion'] !== AGENT_PROFILE_API_VERSION) {
    return err(`apiVersion: must be ${AGENT_PROFILE_API_VERSION}, got ${JSON.stringify(obj['apiVersion'])}`);
  }
  if (obj['kind'] !== undefined && obj['kind'] !== AGENT_PROFILE_KIND) return err(`kind: must be ${AGENT_PROFILE_KIND}, got ${JSON.stringify(obj['kind'])}`);
  const metadata = isJsonObject(obj['metadata']) ? obj['metadata'] : {};
  if (!isJsonObject(obj['spec'])) return err('spec: is required');
  const parsed = agentProfileSchema.safeParse({ name: metadata['name'], ...obj['spec'] }, { reportInput: true });
  if (parsed.success) return ok(parsed.data);
  return err(parsed.error.issues.map((issue) => `${fieldOf(issue.path)}: ${describeIssue(issue)}`).join('\n'));
}

/** The AgentProfile object for a profile: what `kubectl apply` takes and PROFILES_FILE holds. */
export function agentProfileObject(profile: AgentProfile): { apiVersion: string; kind: string; metadata: { name: string }; spec: Omit<AgentProfile, 'name'> } {
  const { name, ...spec } = profile;
  return { apiVersion: AGENT_PROFILE_API_VERSION, kind: AGENT_PROFILE_KIND, metadata: { name }, spec };
}

/** An entry for a raw API object (a reflector's projection). */
export function agentProfileEntry(obj: unknown): AgentProfileEntry | undefined {
  if (!isJsonObject(obj) || !isJsonObject(obj['metadata'])) return undefined;
  const { name, generation, creationTimestamp } = obj['metadata'];
  if (typeof name !== 'string') return undefined;
  return {
    name,
    generation: typeof generation === 'number' ? generation : 0,
    createdAt: typeof creationTimestamp === 'string' ? creationTimestamp : '',
    profile: parseAgentProfile(obj),
  };
}

/**
 * Parses AgentProfile YAML: one or more documents, each an AgentProfile or a List of them (as
 * `kubectl get agentprofiles -o yaml` prints). Every problem is reported, one per line, naming the
 * document or profile and the field; nothing throws. Conflicts between profiles are errors here.
 */
export function parseAgentProfileDocuments(yamlText: string): Result<AgentProfile[]> {
  let documents: YAML.Document.Parsed[];
  try {
    documents = YAML.parseAllDocuments(yamlText, { prettyErrors: true, uniqueKeys: true }) as YAML.Document.Parsed[];
  } catch (error) {
    return err(`is not valid YAML (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!Array.isArray(documents)) return err('is empty');
  const problems: string[] = [];
  const objects: { where: string; obj: unknown }[] = [];
  documents.forEach((document, index) => {
    const where = documents.length > 1 ? `document ${index + 1}` : 'document';
    if (document.errors.length > 0) {
      problems.push(...document.errors.map((error) => `${where}: is not valid YAML (${error.message.split('\n')[0]})`));
      return;
    }
    let raw: unknown;
    try {
      raw = document.toJS({ maxAliasCount: 100 });
    } catch (error) {
      problems.push(`${where}: cannot be read (${error instanceof Error ? error.message : String(error)})`);
      return;
    }
    if (raw === null || raw === undefined) return; // an empty document, e.g. after a trailing ---
    if (isJsonObject(raw) && raw['profiles'] !== undefined && raw['kind'] === undefined) {
      problems.push(`${where}: the "profiles:" list format was replaced by AgentProfile objects; convert it with: npm run -s convert-profiles -- <file> > profiles.yaml`);
      return;
    }
    if (isJsonObject(raw) && typeof raw['kind'] === 'string' && raw['kind'].endsWith('List') && Array.isArray(raw['items'])) {
      raw['items'].forEach((item, i) => objects.push({ where: `${where} items[${i}]`, obj: item }));
      return;
    }
    objects.push({ where, obj: raw });
  });
  const profiles: AgentProfile[] = [];
  for (const { where, obj } of objects) {
    if (!isJsonObject(obj) || obj['apiVersion'] !== AGENT_PROFILE_API_VERSION || obj['kind'] !== AGENT_PROFILE_KIND) {
      problems.push(`${where}: must be apiVersion ${AGENT_PROFILE_API_VERSION}, kind ${AGENT_PROFILE_KIND}`);
      continue;
    }
    const name = isJsonObject(obj['metadata']) && typeof obj['metadata']['name'] === 'string' ? obj['metadata']['name'] : undefined;
    const parsed = parseAgentProfile(obj);
    if (parsed.ok) profiles.push(parsed.value);
    else problems.push(...parsed.error.split('\n').map((line) => `${name ? `AgentProfile ${name}` : where}: ${line}`));
  }
  if (problems.length > 0) return err(problems.join('\n'));
  if (profiles.length === 0) return err('holds no AgentProfile');
  problems.push(...profileConflicts(profiles).map(({ name, problem }) => `AgentProfile ${name}: ${problem}`));
  return problems.length > 0 ? err(problems.join('\n')) : ok(profiles);
}

/**
 * What two profiles must not share: the name, the annotation prefix, the agent container's name,
 * the ClusterRole and the binding. For each profile that clashes with an earlier one, why.
 */
export function profileConflicts(profiles: readonly AgentProfile[]): { name: string; problem: string }[] {
  const claims = new Map<string, string>();
  const conflicts: { name: string; problem: string }[] = [];
  for (const profile of profiles) {
    const keys: [string, string][] = [
      ['metadata.name', profile.name],
      ['spec.annotationPrefix', profile.annotationPrefix],
      ['spec.container.name', profile.container.name],
      ...(profile.rbac
        ? ([
            ['spec.rbac.clusterRole', profile.rbac.clusterRole],
            [`spec.rbac.binding.name (${profile.rbac.binding.kind})`, `${profile.rbac.binding.kind}/${profile.rbac.binding.name}`],
          ] as [string, string][])
        : []),
    ];
    const clashes = keys.flatMap(([field, value]) => {
      const owner = claims.get(`${field}=${value}`);
      return owner === undefined ? [] : [`${field} ${JSON.stringify(value.replace(/^[A-Za-z]+\//, ''))} is already used by AgentProfile ${owner}`];
    });
    if (clashes.length > 0) {
      conflicts.push({ name: profile.name, problem: clashes.join('; ') });
      continue;
    }
    keys.forEach(([field, value]) => claims.set(`${field}=${value}`, profile.name));
  }
  return conflicts;
}

function fieldOf(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'spec';
  if (path[0] === 'name') return 'metadata.name';
  return path.reduce<string>((text, segment) => (typeof segment === 'number' ? `${text}[${segment}]` : `${text}.${String(segment)}`), 'spec');
}
