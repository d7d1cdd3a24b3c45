import { cloneJson, type JsonObject, type JsonValue } from '@outrigger/admission';
import type { AgentProfile } from '@outrigger/agent-profiles';
import { type ResourceValues, withValues } from './resource-overrides.js';

/**
 * The agent container: the profile's container, with env in a fixed order (parameters, then
 * downward-API fields, then the profile's own env, values or valueFrom). POD_NAME and friends use fieldRef because a
 * controller-made pod has no name yet at admission time. A native sidecar (`native`, see
 * runsAsNativeSidecar) is an init container with `restartPolicy: Always`. `resources`: the
 * overrides of the namespace and the pod (resourceOverrides), set into the profile's resources.
 */
export function buildAgentContainer(
  profile: AgentProfile,
  parameterEnv: readonly { readonly name: string; readonly value: string }[],
  native: boolean,
  resources: ResourceValues = new Map(),
): JsonObject {
  const { env: staticEnv = [], ...container } = profile.container;
  const env: JsonValue[] = [
    ...parameterEnv.map(({ name, value }) => ({ name, value })),
    ...profile.fieldEnv.map(({ env: name, fieldPath }) => ({
      name,
      valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath } },
    })),
    ...staticEnv.map((entry) => cloneJson(entry as JsonObject)),
  ];
  // A copy, so no pod shares (and no later mutation reaches) the profile's objects. Members are
  // assigned, not spread into a new literal: see no-restricted-syntax in eslint.config.mjs.
  const agent = cloneJson(container as JsonObject);
  if (env.length > 0) agent['env'] = env;
  if (native) agent['restartPolicy'] = 'Always';
  if (resources.size > 0) agent['resources'] = withValues(profile.container.resources ?? {}, resources);
  return agent;
}
