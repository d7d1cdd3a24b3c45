import { REVOKED_ANNOTATION, REVOKED_UNTIL_ANNOTATION } from '@outrigger/agent-profiles';
import type { KubeObject } from '@outrigger/kube';
import { describe, expect, it } from 'vitest';
import { ownBindingsWatch } from './rbac-watches.js';

const revokedOf = (annotations: Record<string, string>) =>
  ownBindingsWatch('clusterrolebindings').project?.({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'xxl-agent-exec.a', labels: { 'outrigger.dev/profile': 'xxl-job', 'outrigger.dev/namespace': 'a' }, annotations },
    roleRef: { name: 'xxl-agent-exec' },
    subjects: [],
  } as KubeObject)?.binding.revoked;

const entry = (namespace: string, name: string, untilMs: number) => ({ kind: 'ServiceAccount', namespace, name, untilMs });

describe('the binding watch reads the revoked list', () => {
  it('with a date per entry, sorted', () => {
    expect(revokedOf({ [REVOKED_ANNOTATION]: 'b/y a/x', [REVOKED_UNTIL_ANNOTATION]: '2000 1000' })).toEqual([entry('a', 'x', 1000), entry('b', 'y', 2000)]);
  });

  it('with one date for every entry, as earlier versions wrote it', () => {
    expect(revokedOf({ [REVOKED_ANNOTATION]: 'a/x a/y', [REVOKED_UNTIL_ANNOTATION]: '1000' })).toEqual([entry('a', 'x', 1000), entry('a', 'y', 1000)]);
  });

  it('as run out when its dates do not parse or do not match its names, so that the next write clears it', () => {
    for (const until of [undefined, '', 'soon', '1000 2000', '1e3', '-1']) {
      const annotations = { [REVOKED_ANNOTATION]: 'a/x a/y a/z', ...(until === undefined ? {} : { [REVOKED_UNTIL_ANNOTATION]: until }) };
      expect(revokedOf(annotations)?.map((e) => e.untilMs), String(until)).toEqual([0, 0, 0]);
    }
  });

  it('keeping the later date of a name listed twice, and skipping what is not <namespace>/<name>', () => {
    expect(revokedOf({ [REVOKED_ANNOTATION]: 'a/x /y a/ a/x', [REVOKED_UNTIL_ANNOTATION]: '1000 1 2 3000' })).toEqual([entry('a', 'x', 3000)]);
    expect(revokedOf({})).toBeUndefined();
  });
});
