import { describe, expect, it } from 'vitest';
import { denied, mutated, skipped, type AdmissionContext, type Extension, type ExtensionResult } from './extension.js';
import { isJsonObject, type JsonObject } from './json-value.js';
import { mutatePod } from './mutate.js';
import { NO_OWNED_PATHS, UnownedPatchError } from './owned-paths.js';

const ctx: AdmissionContext = {
  uid: 'uid-1',
  namespace: 'shop',
  name: '',
  operation: 'CREATE',
  dryRun: false,
  userInfo: {},
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  subResource: '',
};

function pod(): JsonObject {
  return { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'app' }] } };
}

function containers(target: JsonObject): JsonObject[] {
  const spec = target['spec'];
  if (!isJsonObject(spec) || !Array.isArray(spec['containers'])) throw new Error('no containers');
  return spec['containers'] as JsonObject[];
}

/** Appends a container named `name`, owning appends to spec.containers. */
function appender(name: string, extra: Partial<ExtensionResult> = {}): Extension {
  return {
    name,
    ownedPaths: { members: [], appendable: ['/spec/containers'], creatable: [] },
    mutate(target) {
      containers(target).push({ name });
      return { ...mutated({ warnings: [`${name} warns`] }), ...extra } as ExtensionResult;
    },
  };
}

function fixed(name: string, result: ExtensionResult): Extension {
  return { name, ownedPaths: NO_OWNED_PATHS, mutate: () => result };
}

describe('mutatePod', () => {
  it('runs every extension over one clone and diffs it against the original', () => {
    const original = pod();
    const result = mutatePod(original, ctx, [appender('one'), appender('two')]);
    expect(result).toMatchObject({
      outcome: 'allowed',
      patch: [
        { op: 'add', path: '/spec/containers/1', value: { name: 'one' } },
        { op: 'add', path: '/spec/containers/2', value: { name: 'two' } },
      ],
      warnings: ['one warns', 'two warns'],
      decision: 'injected',
    });
    expect(original).toEqual(pod());
  });

  it('passes the context through unchanged', () => {
    let seen: AdmissionContext | undefined;
    mutatePod(pod(), ctx, [
      {
        name: 'spy',
        ownedPaths: NO_OWNED_PATHS,
        mutate(_pod, context) {
          seen = context;
          return skipped('spying');
        },
      },
    ]);
    expect(seen).toBe(ctx);
  });

  it('reports skip reasons when nothing mutated, de-duplicated', () => {
    const result = mutatePod(pod(), ctx, [fixed('a', skipped('not-opted-in')), fixed('b', skipped('not-opted-in'))]);
    expect(result).toMatchObject({ outcome: 'allowed', patch: [], decision: 'skipped:not-opted-in' });
  });

  it('says so when there are no extensions', () => {
    expect(mutatePod(pod(), ctx, []).decision).toBe('skipped:no-extensions');
  });

  it('lets a mutation decide over a skip, and uses its own decision string', () => {
    const result = mutatePod(pod(), ctx, [fixed('a', skipped('x')), appender('b', { decision: 'injected:b' } as Partial<ExtensionResult>)]);
    expect(result.decision).toBe('injected:b');
  });

  it('stops at the first denial and drops earlier mutations', () => {
    const result = mutatePod(pod(), ctx, [
      appender('one'),
      fixed('judge', denied(422, 'annotation x is required', 'missing-parameter', ['judge warns'])),
      appender('never'),
    ]);
    expect(result).toEqual({
      outcome: 'denied',
      code: 422,
      message: 'annotation x is required',
      reason: 'missing-parameter',
      warnings: ['one warns', 'judge warns'],
      decision: 'denied:missing-parameter',
      reports: [
        { extension: 'one', result: mutated({ warnings: ['one warns'] }) },
        { extension: 'judge', result: denied(422, 'annotation x is required', 'missing-parameter', ['judge warns']) },
      ],
    });
  });

  it('admits unchanged, warns and surfaces the error when an extension throws', () => {
    const boom = new Error('boom');
    const original = pod();
    const result = mutatePod(original, ctx, [
      appender('one'),
      {
        name: 'broken',
        ownedPaths: NO_OWNED_PATHS,
        mutate(target) {
          containers(target).length = 0;
          throw boom;
        },
      },
    ]);
    expect(result).toMatchObject({
      outcome: 'allowed',
      patch: [],
      pod: original,
      decision: 'skipped:internal-error',
      failure: { extension: 'broken', error: boom },
    });
    expect(result.warnings).toEqual([
      'outrigger: pod admitted without mutation after an internal error in extension broken; see the injector logs',
    ]);
  });

  it('refuses instead, and still surfaces the error, when an extension claims the pod (it opts in or carries an agent)', () => {
    const boom = new Error('boom');
    const claiming: Extension = {
      name: 'claiming',
      ownedPaths: NO_OWNED_PATHS,
      claims: () => 'opts into an agent',
      mutate() {
        throw boom;
      },
    };
    const result = mutatePod(pod(), ctx, [claiming]);
    expect(result).toMatchObject({
      outcome: 'denied',
      code: 500,
      reason: 'internal-error',
      decision: 'denied:internal-error',
      message: 'outrigger: internal error in extension claiming on a pod that opts into an agent: refused rather than admitted unchecked; see the injector logs',
      failure: { extension: 'claiming', error: boom },
    });
    // A claim that throws counts as a claim; a claim of another extension counts too.
    const unsure: Extension = { name: 'unsure', ownedPaths: NO_OWNED_PATHS, claims: () => { throw boom; }, mutate: () => skipped('x') };
    const broken: Extension = { name: 'broken', ownedPaths: NO_OWNED_PATHS, mutate: () => { throw boom; } };
    expect(mutatePod(pod(), ctx, [unsure, broken])).toMatchObject({ outcome: 'denied', message: expect.stringContaining('a pod that extension unsure could not tell apart') });
    expect(mutatePod(pod(), ctx, [{ ...claiming, claims: () => undefined }])).toMatchObject({ outcome: 'allowed', decision: 'skipped:internal-error' });
  });

  it('treats a malformed result as an internal error', () => {
    const results = [undefined, { type: 'mutated' }, { type: 'denied', code: 500, message: 'x', reason: 'y', warnings: [] }, { type: 'weird', warnings: [] }];
    for (const bad of results) {
      const result = mutatePod(pod(), ctx, [fixed('bad', bad as unknown as ExtensionResult)]);
      expect(result).toMatchObject({ outcome: 'allowed', patch: [], decision: 'skipped:internal-error' });
      expect(result.outcome === 'allowed' && result.failure?.error).toBeInstanceOf(TypeError);
    }
  });

  it('refuses a patch outside what the mutating extensions own', () => {
    const sneaky: Extension = {
      name: 'sneaky',
      ownedPaths: { members: [], appendable: ['/spec/containers'], creatable: [] },
      mutate(target) {
        containers(target)[0] = { name: 'replaced' };
        return mutated();
      },
    };
    const result = mutatePod(pod(), ctx, [sneaky]);
    expect(result).toMatchObject({ outcome: 'allowed', patch: [], decision: 'skipped:internal-error' });
    expect(result.outcome === 'allowed' && result.failure?.extension).toBeUndefined();
    expect(result.outcome === 'allowed' && result.failure?.error).toBeInstanceOf(UnownedPatchError);
  });

  it('refuses changes made by an extension that reported a skip', () => {
    const liar: Extension = {
      name: 'liar',
      ownedPaths: { members: [], appendable: ['/spec/containers'], creatable: [] },
      mutate(target) {
        containers(target).push({ name: 'hidden' });
        return skipped('nothing-to-see');
      },
    };
    expect(mutatePod(pod(), ctx, [liar]).decision).toBe('skipped:internal-error');
  });
});
