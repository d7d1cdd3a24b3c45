import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_PROFILE_CRD_FILE, agentProfileCrd, agentProfileCrdYaml } from './agent-profile-crd.js';

type Schema = Record<string, unknown>;
const crd = agentProfileCrd() as { spec: { versions: { schema: { openAPIV3Schema: Schema } }[] } };
const root = crd.spec.versions[0]?.schema.openAPIV3Schema as Schema;

/** Every schema node, with its path. */
function* nodes(node: Schema, path = ''): Generator<[string, Schema]> {
  yield [path, node];
  for (const [name, child] of Object.entries((node['properties'] ?? {}) as Record<string, Schema>)) yield* nodes(child, `${path}.${name}`);
  if (node['items']) yield* nodes(node['items'] as Schema, `${path}[]`);
  if (typeof node['additionalProperties'] === 'object') yield* nodes(node['additionalProperties'] as Schema, `${path}{}`);
}

describe('agentProfileCrd', () => {
  it('is what deploy/ ships: run `npm run generate:crd` after changing the profile schema', () => {
    expect(readFileSync(new URL(`../../../${AGENT_PROFILE_CRD_FILE}`, import.meta.url), 'utf8')).toBe(agentProfileCrdYaml());
  });

  it('is a structural schema: a type everywhere (or int-or-string), no refs, no closed objects, list-map keys required', () => {
    for (const [path, node] of nodes(root)) {
      expect(node['type'] !== undefined || node['x-kubernetes-int-or-string'] === true, `${path} has a type`).toBe(true);
      expect(node).not.toHaveProperty('$ref');
      expect(node['additionalProperties'], `${path} is not closed`).not.toBe(false);
      expect(node['properties'] && node['additionalProperties'], `${path}: properties and additionalProperties together`).toBeFalsy();
      for (const key of (node['x-kubernetes-list-map-keys'] ?? []) as string[]) {
        expect((node['items'] as Schema)['required'], `${path} map key ${key} is required`).toContain(key);
      }
    }
  });

  it('bounds every list and string a CEL rule walks, so the API server can estimate its cost', () => {
    for (const [path, node] of nodes(root)) {
      if (!node['x-kubernetes-validations'] || node['type'] !== 'array') continue;
      expect(node['maxItems'], `${path} has maxItems`).toBeTypeOf('number');
    }
  });

  it('carries the profile as spec (named by metadata.name) and a status the rbac-syncer writes', () => {
    const spec = (root['properties'] as Record<string, Schema>)['spec'] as Schema;
    expect(Object.keys(spec['properties'] as Schema)).toEqual(['annotationPrefix', 'container', 'parameters', 'fieldEnv', 'nativeSidecar', 'podMayChooseNativeSidecar', 'holdApplicationUntilReady', 'dangerouslyAllowHostNamespaces', 'serviceAccountToken', 'dangerouslyAllowPodSecurity', 'rbac', 'namespaceSelector', 'canary', 'overrides', 'volumes', 'imagePullSecrets', 'dangerouslyAllowNodeAccess']);
    expect(spec['required']).toEqual(['annotationPrefix', 'container']);
    expect(Object.keys(((root['properties'] as Record<string, Schema>)['status'] as Schema)['properties'] as Schema)).toEqual(['observedGeneration', 'boundSubjects', 'agentPodSecurity', 'namespaces', 'agents', 'conditions']);
  });
});
