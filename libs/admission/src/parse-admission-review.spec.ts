import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAdmissionReview } from './parse-admission-review.js';
import { loadJsonFixture } from './testing/fixtures.js';

const FIXTURES = [
  'v1-pod-opted-in',
  'v1beta1-pod-opted-in',
  'v1-pod-no-annotations',
  'v1-deployment-pod',
  'v1-pod-init-containers',
  'v1-pod-already-injected',
  'v1-pod-unknown-fields',
  'v1-pod-kube-system',
  'v1-pod-dry-run',
  'v1-pod-update',
  'v1-pod-binding',
  'v1-deployment-create',
];

function fixture(name: string): Record<string, unknown> & { request: Record<string, unknown> } {
  return loadJsonFixture(`reviews/${name}.json`) as Record<string, unknown> & { request: Record<string, unknown> };
}

function errorOf(body: unknown): string {
  const result = parseAdmissionReview(body);
  if (result.ok) throw new Error('expected a parse error');
  return result.error;
}

describe('parseAdmissionReview', () => {
  it.each(FIXTURES)('accepts the %s fixture and keeps the raw object by reference', (name) => {
    const body = fixture(name);
    const result = parseAdmissionReview(body);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.request.uid).toBe(body.request['uid']);
    expect(result.value.request.object).toBe(body.request['object']);
  });

  it('reads the v1beta1 envelope and its request fields', () => {
    const result = parseAdmissionReview(fixture('v1beta1-pod-opted-in'));
    expect(result).toMatchObject({
      ok: true,
      value: {
        apiVersion: 'admission.k8s.io/v1beta1',
        kind: 'AdmissionReview',
        request: {
          uid: '0d6a3c4e-8f1b-4e42-b2a9-5c7f3e1d9b26',
          operation: 'CREATE',
          namespace: 'shop',
          name: 'orders-worker',
          dryRun: false,
          resource: { group: '', version: 'v1', resource: 'pods' },
          userInfo: { username: 'kubernetes-admin', groups: ['kubeadm:cluster-admins', 'system:authenticated'] },
        },
      },
    });
  });

  it('keeps a missing request.name for generateName pods and reads the subresource', () => {
    const pod = parseAdmissionReview(fixture('v1-deployment-pod'));
    expect(pod.ok && pod.value.request.name).toBeUndefined();
    const binding = parseAdmissionReview(fixture('v1-pod-binding'));
    expect(binding.ok && binding.value.request.subResource).toBe('binding');
  });

  it.each<[string, (body: ReturnType<typeof fixture>) => unknown, string]>([
    ['null body', () => null, 'body: must be an object (got null)'],
    ['array body', () => [], 'body: must be an object (got a list)'],
    ['number body', () => 42, 'body: must be an object (got 42)'],
    ['unknown apiVersion', (b) => ({ ...b, apiVersion: 'admission.k8s.io/v2' }), 'apiVersion: must be one of admission.k8s.io/v1, admission.k8s.io/v1beta1 (got "admission.k8s.io/v2")'],
    ['wrong kind', (b) => ({ ...b, kind: 'Pod' }), 'kind: must be AdmissionReview (got "Pod")'],
    ['no request', (b) => ({ ...b, request: undefined }), 'request: must be an object (got nothing)'],
    ['request is a string', (b) => ({ ...b, request: 'x' }), 'request: must be an object (got "x")'],
    ['missing uid', (b) => ({ ...b, request: { ...b.request, uid: undefined } }), 'request.uid: must be a non-empty string'],
    ['empty uid', (b) => ({ ...b, request: { ...b.request, uid: '' } }), 'request.uid: must be a non-empty string'],
    ['numeric uid', (b) => ({ ...b, request: { ...b.request, uid: 7 } }), 'request.uid: must be a non-empty string'],
    ['bad operation', (b) => ({ ...b, request: { ...b.request, operation: 'PATCH' } }), 'request.operation: must be one of CREATE, UPDATE, DELETE, CONNECT (got "PATCH")'],
    ['kind not an object', (b) => ({ ...b, request: { ...b.request, kind: 'Pod' } }), 'request.kind: must be an object (got "Pod")'],
    ['kind without kind', (b) => ({ ...b, request: { ...b.request, kind: { group: '', version: 'v1' } } }), 'request.kind.kind: must be a non-empty string'],
    ['kind group not a string', (b) => ({ ...b, request: { ...b.request, kind: { group: 1, version: 'v1', kind: 'Pod' } } }), 'request.kind.group: must be a string (got 1)'],
    ['resource without resource', (b) => ({ ...b, request: { ...b.request, resource: { group: '', version: 'v1' } } }), 'request.resource.resource: must be a non-empty string'],
    ['object is a list', (b) => ({ ...b, request: { ...b.request, object: [] } }), 'request.object: must be an object'],
    ['object is a string', (b) => ({ ...b, request: { ...b.request, object: '{}' } }), 'request.object: must be an object'],
    ['oldObject is a number', (b) => ({ ...b, request: { ...b.request, oldObject: 1 } }), 'request.oldObject: must be an object or null'],
    ['dryRun is a string', (b) => ({ ...b, request: { ...b.request, dryRun: 'true' } }), 'request.dryRun: must be a boolean'],
    ['namespace is a number', (b) => ({ ...b, request: { ...b.request, namespace: 3 } }), 'request.namespace: must be a string (got 3)'],
    ['userInfo is a list', (b) => ({ ...b, request: { ...b.request, userInfo: [] } }), 'request.userInfo: must be an object (got a list)'],
    ['groups hold a number', (b) => ({ ...b, request: { ...b.request, userInfo: { groups: ['a', 1] } } }), 'request.userInfo.groups: must be a list of strings'],
    ['extra holds a string', (b) => ({ ...b, request: { ...b.request, userInfo: { extra: { scopes: 'x' } } } }), 'request.userInfo.extra["scopes"]: must be a list of strings'],
  ])('names the problem: %s', (_case, build, message) => {
    expect(errorOf(build(fixture('v1-pod-opted-in')))).toBe(message);
  });

  it('accepts a request without object (DELETE) and null userInfo', () => {
    const body = fixture('v1-pod-opted-in');
    const result = parseAdmissionReview({ ...body, request: { ...body.request, operation: 'DELETE', object: null, userInfo: null } });
    expect(result.ok && result.value.request.object).toBeUndefined();
    expect(result.ok && result.value.request.userInfo).toEqual({});
  });

  it('cuts long strings in messages', () => {
    const message = errorOf({ apiVersion: 'x'.repeat(5000), kind: 'AdmissionReview', request: {} });
    expect(message.length).toBeLessThan(200);
  });

  it('never throws on a throwing getter or proxy', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('boom');
        },
      },
    );
    expect(parseAdmissionReview(hostile)).toEqual({ ok: false, error: 'body: could not be read as an AdmissionReview' });
    const body = fixture('v1-pod-opted-in');
    Object.defineProperty(body.request, 'uid', {
      get() {
        throw new Error('boom');
      },
    });
    expect(parseAdmissionReview(body).ok).toBe(false);
  });

  it('never throws on deep nesting', () => {
    let deep: unknown = {};
    for (let level = 0; level < 100_000; level += 1) deep = { request: deep };
    expect(parseAdmissionReview({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: deep }).ok).toBe(false);
    const body = fixture('v1-pod-opted-in');
    expect(parseAdmissionReview({ ...body, request: { ...body.request, object: { spec: deep } } }).ok).toBe(true);
  });

  it('never throws on arbitrary values', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withMap: true, withSet: true, withTypedArray: true }), (value) => {
        const result = parseAdmissionReview(value);
        expect(typeof result.ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  it('never throws when any field of a real review is replaced by an arbitrary JSON value', () => {
    const paths = [
      ['apiVersion'],
      ['kind'],
      ['request'],
      ['request', 'uid'],
      ['request', 'kind'],
      ['request', 'kind', 'group'],
      ['request', 'resource'],
      ['request', 'resource', 'version'],
      ['request', 'operation'],
      ['request', 'userInfo'],
      ['request', 'userInfo', 'groups'],
      ['request', 'userInfo', 'extra'],
      ['request', 'object'],
      ['request', 'oldObject'],
      ['request', 'dryRun'],
      ['request', 'options'],
      ['request', 'namespace'],
      ['request', 'requestKind'],
    ];
    fc.assert(
      fc.property(fc.constantFrom(...paths), fc.jsonValue(), (path, value) => {
        const body = fixture('v1-pod-opted-in') as Record<string, unknown>;
        let parent = body;
        for (const key of path.slice(0, -1)) parent = parent[key] as Record<string, unknown>;
        parent[path[path.length - 1] as string] = value;
        const result = parseAdmissionReview(body);
        if (!result.ok) expect(result.error).toMatch(/^(body|apiVersion|kind|request)[.:[]/);
      }),
      { numRuns: 500 },
    );
  });
});
