import { arrayMember, isJsonObject, type JsonObject, type JsonValue, member, objectMember, stringMember } from '@outrigger/admission';
import { AGENT_TOKEN_VOLUME } from './service-account-token.js';

/**
 * Why the agent's token would not be the agent's alone in this pod (whose own token the injector
 * took away), or undefined: the pod mounts no token of its own, only agents (`isAgent`) mount the
 * agent's volume, no other volume projects a ServiceAccount token (a pod author may write one), and
 * no container can reach the agent's files through a shared process namespace.
 */
export function tokenConfinementProblem(spec: JsonObject, isAgent: (container: string) => boolean): string | undefined {
  if (member(spec, 'automountServiceAccountToken') !== false) return 'spec.automountServiceAccountToken is not false: the pod keeps its own token';
  if (member(spec, 'shareProcessNamespace') === true) return "spec.shareProcessNamespace is true: other containers could read the agent's token";
  const projecting = (arrayMember(spec, 'volumes') ?? []).find((volume) => isJsonObject(volume) && stringMember(volume, 'name') !== AGENT_TOKEN_VOLUME && projectsToken(volume));
  if (projecting !== undefined) return `volume ${isJsonObject(projecting) ? String(stringMember(projecting, 'name')) : ''} projects a ServiceAccount token besides the agent's`;
  for (const list of ['initContainers', 'containers']) {
    for (const container of arrayMember(spec, list) ?? []) {
      if (!isJsonObject(container)) continue;
      const name = stringMember(container, 'name') ?? '';
      const mounts = (arrayMember(container, 'volumeMounts') ?? []).some((m) => isJsonObject(m) && stringMember(m, 'name') === AGENT_TOKEN_VOLUME);
      if (mounts && !isAgent(name)) return `container ${name} mounts ${AGENT_TOKEN_VOLUME}, the agent's token volume`;
    }
  }
  return undefined;
}

function projectsToken(volume: JsonObject): boolean {
  const projected = objectMember(volume, 'projected');
  return (projected ? (arrayMember(projected, 'sources') ?? []) : []).some((source: JsonValue) => isJsonObject(source) && member(source, 'serviceAccountToken') !== undefined);
}
