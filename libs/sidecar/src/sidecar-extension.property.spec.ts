import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AdmissionReview } from '@outrigger/admission';
import { applyPatchCopy, decodePatch, type PatchOperation, type ReviewOutcome, reviewResponse, valueAtPointer } from '@outrigger/admission';
import { referenceProfile } from '@outrigger/agent-profiles';
import { type GeneratedPod, podArbitrary, podCreateReview } from './testing/arbitraries.js';
import { sidecarExtension } from './sidecar-extension.js';

const XXL_JOB_PROFILE = referenceProfile();

const extension = sidecarExtension({ profiles: [XXL_JOB_PROFILE], injectorVersion: '0.1.0' });

/** Owned paths written independently of the implementation's own list. */
const OWNED_PATH = /^\/(metadata(\/annotations(\/xxl-agent~1status)?)?|spec\/(containers\/\d+|initContainers(\/\d+)?|volumes(\/\d+)?|automountServiceAccountToken))$/;
/** What may be removed: the ServiceAccount plugin's token volume and its mounts. */
const REMOVABLE_PATH = /^\/spec\/(volumes\/\d+|(containers|initContainers)\/\d+\/volumeMounts\/\d+)$/;

function respond(generated: GeneratedPod): { review: AdmissionReview; outcome: ReviewOutcome; patch: PatchOperation[] } {
  const review = podCreateReview(generated.pod, generated.namespace);
  const outcome = reviewResponse(review, [extension]);
  const encoded = outcome.reply.response.patch;
  return { review, outcome, patch: encoded === undefined ? [] : decodePatch(encoded) };
}

const EXPECTED_DECISION: Record<GeneratedPod['optIn'], string> = {
  none: 'skipped:not-opted-in',
  enabled: 'injected',
  'enabled-by-list': 'injected',
  disabled: 'skipped:not-opted-in',
  'bad-boolean': 'denied:invalid-annotation',
  'missing-job-addr': 'denied:missing-parameter',
  'bad-url': 'denied:invalid-parameter',
  'unknown-target': 'denied:invalid-parameter',
  'unknown-annotation': 'denied:unknown-annotation',
  'already-injected': 'skipped:already-injected',
  'status-without-agent': 'denied:forged-agent',
  'agent-container-present': 'denied:forged-agent',
  'impostor-agent-container': 'denied:forged-agent',
  'forged-not-opted-in': 'denied:forged-agent',
  'copied-not-opted-in': 'skipped:not-opted-in',
};

describe('sidecar injection over arbitrary realistic pods', () => {
  it('decides as the annotations say, and never fails internally', () => {
    fc.assert(
      fc.property(podArbitrary, (generated) => {
        const { outcome } = respond(generated);
        expect(outcome.failure).toBeUndefined();
        expect(outcome.decision).toBe(EXPECTED_DECISION[generated.optIn]);
        expect(outcome.reply.response.allowed).toBe(!outcome.decision.startsWith('denied:'));
      }),
      { numRuns: 300 },
    );
  });

  it('returns a patch that turns the input into exactly the mutated pod, without touching the input', () => {
    fc.assert(
      fc.property(podArbitrary, (generated) => {
        const before = structuredClone(generated.pod);
        const { review, outcome, patch } = respond(generated);
        // Compared as JSON text (what the API server sees): generated keys such as `constructor`
        // defeat toStrictEqual's prototype check, and the text also pins the key order.
        expect(JSON.stringify(review.request.object)).toBe(JSON.stringify(before));
        if (outcome.mutation?.outcome !== 'allowed') return;
        expect(JSON.stringify(applyPatchCopy(before, patch))).toBe(JSON.stringify(outcome.mutation.pod));
      }),
      { numRuns: 300 },
    );
  });

  it('only ever adds under the owned paths, appending at the end of lists, and removes only the pod\'s own token', () => {
    fc.assert(
      fc.property(podArbitrary, (generated) => {
        const { patch } = respond(generated);
        for (const op of patch) {
          if (op.op === 'remove') {
            expect(op.path).toMatch(REMOVABLE_PATH);
            expect((valueAtPointer(generated.pod, op.path) as { name: string }).name).toMatch(/^kube-api-access-/);
            continue;
          }
          expect(op.op).toBe('add');
          expect(op.path).toMatch(OWNED_PATH);
          const index = /^\/spec\/(containers|initContainers)\/(\d+)$/.exec(op.path);
          if (index) {
            const spec = generated.pod['spec'] as Record<string, unknown[] | undefined>;
            expect(Number(index[2])).toBe((spec[index[1] ?? ''] ?? []).length);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('leaves the API token to the agent alone (the reference profile is agentOnly)', () => {
    fc.assert(
      fc.property(
        podArbitrary.filter((generated) => generated.optIn === 'enabled' || generated.optIn === 'enabled-by-list'),
        (generated) => {
          const { outcome } = respond(generated);
          if (outcome.mutation?.outcome !== 'allowed') throw new Error('not injected');
          const spec = outcome.mutation.pod['spec'] as { automountServiceAccountToken?: boolean; containers: { name: string; volumeMounts?: { name: string }[] }[]; initContainers?: { volumeMounts?: { name: string }[] }[] };
          expect(spec.automountServiceAccountToken).toBe(false);
          const mounts = (c: { name?: string; volumeMounts?: { name: string }[] }) => (c.volumeMounts ?? []).map((m) => `${c.name}:${m.name}`);
          expect([...spec.containers, ...(spec.initContainers ?? [])].flatMap(mounts)).toEqual(['xxl-agent:xxl-agent-data', 'xxl-agent:outrigger-agent-token']);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('is idempotent: injecting into its own output yields an empty patch', () => {
    fc.assert(
      fc.property(podArbitrary, (generated) => {
        const first = respond(generated);
        if (first.outcome.mutation?.outcome !== 'allowed') return;
        const again = respond({ ...generated, pod: applyPatchCopy(generated.pod, first.patch) });
        expect(again.patch).toEqual([]);
        if (first.patch.length > 0) expect(again.outcome.decision).toBe('skipped:already-injected');
      }),
      { numRuns: 300 },
    );
  });

  it('injects for every pod that opted in correctly, whatever else it carries', () => {
    fc.assert(
      fc.property(
        podArbitrary.filter((generated) => generated.optIn === 'enabled' || generated.optIn === 'enabled-by-list'),
        (generated) => {
          const { patch } = respond(generated);
          const added = patch.find((op) => op.op === 'add' && /^\/spec\/containers\/\d+$/.test(op.path));
          expect(added && 'value' in added ? (added.value as { name: string }).name : undefined).toBe('xxl-agent');
        },
      ),
      { numRuns: 100 },
    );
  });
});
