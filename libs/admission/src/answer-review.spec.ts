import { describe, expect, it } from 'vitest';
import type { AdmissionReview } from './admission-types.js';
import { mutated, type Extension } from './extension.js';
import { isJsonObject } from './json-value.js';
import { NO_OWNED_PATHS } from './owned-paths.js';
import { decodePatch } from './patch.js';
import { admissionContext, isPodCreate, reviewResponse } from './answer-review.js';
import { loadReview } from './testing/fixtures.js';

/** Appends a marker container and records every context it saw. */
function recorder(): Extension & { seen: unknown[] } {
  const seen: unknown[] = [];
  return {
    name: 'recorder',
    seen,
    ownedPaths: { members: [], appendable: ['/spec/containers'], creatable: [] },
    mutate(pod, ctx) {
      seen.push(ctx);
      const spec = pod['spec'];
      if (isJsonObject(spec) && Array.isArray(spec['containers'])) spec['containers'].push({ name: 'marker' });
      return mutated();
    },
  };
}

describe('reviewResponse', () => {
  it.each(['v1-pod-binding', 'v1-deployment-create', 'v1-pod-update'])('allows %s unchanged without calling extensions', (name) => {
    const review = loadReview(name);
    const extension = recorder();
    const outcome = reviewResponse(review, [extension]);
    expect(outcome.reply).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: review.request.uid, allowed: true, auditAnnotations: { decision: 'skipped:not-pod-create' } },
    });
    expect(outcome.decision).toBe('skipped:not-pod-create');
    expect(outcome.result).toBe('skipped');
    expect(extension.seen).toEqual([]);
  });

  it('mutates a pod CREATE and answers in v1beta1 when asked in v1beta1', () => {
    const review = loadReview('v1beta1-pod-opted-in');
    const outcome = reviewResponse(review, [recorder()]);
    expect(outcome.reply.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(outcome.reply.response.uid).toBe('0d6a3c4e-8f1b-4e42-b2a9-5c7f3e1d9b26');
    expect(decodePatch(outcome.reply.response.patch ?? '')).toEqual([
      { op: 'add', path: '/spec/containers/2', value: { name: 'marker' } },
    ]);
    expect(outcome.reply.response.auditAnnotations).toEqual({ decision: 'injected' });
    expect(outcome.result).toBe('mutated');
  });

  it('treats dry-run exactly like a real request', () => {
    const real = reviewResponse(loadReview('v1-pod-opted-in'), [recorder()]);
    const dry = reviewResponse(loadReview('v1-pod-dry-run'), [recorder()]);
    expect({ ...dry.reply.response, uid: 'x' }).toEqual({ ...real.reply.response, uid: 'x' });
  });

  it('denies with the extension code and message', () => {
    const judge: Extension = {
      name: 'judge',
      ownedPaths: NO_OWNED_PATHS,
      mutate: () => ({ type: 'denied', code: 400, message: 'bad annotation', reason: 'invalid-annotation', warnings: [] }),
    };
    const outcome = reviewResponse(loadReview('v1-pod-opted-in'), [judge]);
    expect(outcome.reply.response).toEqual({
      uid: '6f8b1f5e-3c1a-4d8e-9a57-1e0c2b7d4a90',
      allowed: false,
      status: { code: 400, message: 'bad annotation', reason: 'BadRequest' },
      auditAnnotations: { decision: 'denied:invalid-annotation' },
    });
    expect(outcome.result).toBe('denied');
  });

  it('surfaces an extension failure next to an unchanged admission', () => {
    const broken: Extension = {
      name: 'broken',
      ownedPaths: NO_OWNED_PATHS,
      mutate() {
        throw new Error('boom');
      },
    };
    const outcome = reviewResponse(loadReview('v1-pod-opted-in'), [broken]);
    expect(outcome.reply.response.allowed).toBe(true);
    expect(outcome.reply.response.patch).toBeUndefined();
    expect(outcome.reply.response.auditAnnotations).toEqual({ decision: 'skipped:internal-error' });
    expect(outcome.result).toBe('failed');
    expect(outcome.failure?.extension).toBe('broken');
    expect(outcome.reply.response.warnings).toHaveLength(1);
  });

  it('refuses a pod an extension claims after an internal error, and surfaces the failure', () => {
    const broken: Extension = { name: 'broken', ownedPaths: NO_OWNED_PATHS, claims: () => 'opts into an agent', mutate: () => { throw new Error('boom'); } };
    const outcome = reviewResponse(loadReview('v1-pod-opted-in'), [broken]);
    expect(outcome.reply.response.allowed).toBe(false);
    expect(outcome.reply.response.status?.code).toBe(500);
    expect(outcome.reply.response.auditAnnotations).toEqual({ decision: 'denied:internal-error' });
    expect(outcome.result).toBe('failed');
    expect(outcome.failure?.extension).toBe('broken');
  });
});

describe('isPodCreate', () => {
  const base = loadReview('v1-pod-opted-in').request;
  it.each<[string, Partial<AdmissionReview['request']>, boolean]>([
    ['pod create', {}, true],
    ['update', { operation: 'UPDATE' }, false],
    ['subresource', { subResource: 'ephemeralcontainers' }, false],
    ['other group', { resource: { group: 'apps', version: 'v1', resource: 'pods' } }, false],
    ['other resource', { resource: { group: '', version: 'v1', resource: 'services' } }, false],
  ])('%s → %s', (_name, change, expected) => {
    expect(isPodCreate({ ...base, ...change })).toBe(expected);
  });
});

describe('admissionContext', () => {
  it('takes namespace from the request when the object has none (controller-made pod)', () => {
    const ctx = admissionContext(loadReview('v1-deployment-pod').request);
    expect(ctx).toMatchObject({ namespace: 'payments', name: '', operation: 'CREATE', dryRun: false, subResource: '' });
    expect(ctx.userInfo.username).toBe('system:serviceaccount:kube-system:replicaset-controller');
  });

  it('reads dryRun and the name', () => {
    expect(admissionContext(loadReview('v1-pod-dry-run').request)).toMatchObject({ dryRun: true, name: 'orders-worker', namespace: 'shop' });
  });
});
