/**
 * CPU per review of Outrigger's admission core against the independent peer of the pod-create
 * bench, in one process, with no network or TLS: what each spends from the request body to the
 * reply's JSON. The peer injects exactly what Outrigger's answer injects (observedInjection holds
 * it to that), so the ratio is the cost of the core's way of doing the same work. Rounds rotate
 * the order of Outrigger, the peer and the peer's twin; the twin's ratio is the noise floor.
 *
 *   node --import tsx tools/bench/admission-core-cpu.ts [--rounds 15] [--reviews 4000]
 *
 * Uses the built libraries (dist/): `npx nx run injector:build` first.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { applyPatchCopy, decodePatch, type JsonObject, parseAdmissionReview, parseJsonBody, reviewResponse } from '@outrigger/admission';
import { referenceProfile } from '@outrigger/agent-profiles';
import { repoRoot } from '@outrigger/control-plane';
import { sidecarExtension } from '@outrigger/sidecar';
import { answerReview } from './independent-webhook.js';
import { observedInjection, type StoredPod } from './observed-injection.js';
import { median, noiseFloor, spread } from './stats.js';
import { holdBenchLock } from './bench-lock.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '15' }, reviews: { type: 'string', default: '4000' } } });
const ROUNDS = Number(values.rounds);
const REVIEWS = Number(values.reviews);
if (!Number.isInteger(ROUNDS) || ROUNDS < 3) throw new Error('--rounds must be an integer of at least 3');
if (!Number.isInteger(REVIEWS) || REVIEWS < 100) throw new Error('--reviews must be an integer of at least 100');

holdBenchLock();

// An opted-in pod as the API server sends it (defaults, the ServiceAccount plugin's token volume).
const body = readFileSync(join(repoRoot(), 'libs/admission/fixtures/reviews/v1-pod-opted-in.json'));
// As the injector builds it for a labelled namespace without Pod Security or resource defaults.
const extensions = [sidecarExtension({ profiles: [referenceProfile()], injectorVersion: 'bench', namespacePodSecurity: () => undefined, namespaceAnnotations: () => undefined, namespaceLabels: () => ({}) })];

function outrigger(): string {
  const json = parseJsonBody(body);
  if (!json.ok) throw new Error(json.error);
  const review = parseAdmissionReview(json.value);
  if (!review.ok) throw new Error(review.error);
  return JSON.stringify(reviewResponse(review.value, extensions).reply);
}

// The peer adds what Outrigger's answer adds, read from the pod before and after that answer's patch.
const answer = JSON.parse(outrigger()) as { response: { patch?: string } };
if (!answer.response.patch) throw new Error('Outrigger did not inject the fixture pod');
const plain = (JSON.parse(body.toString('utf8')) as { request: { object: JsonObject } }).request.object;
const injection = observedInjection(plain as unknown as StoredPod, applyPatchCopy(plain, decodePatch(answer.response.patch)) as unknown as StoredPod);
const peer = () => answerReview(body, injection);

const runners = { outrigger, peer, twin: peer } as const;
type Runner = keyof typeof runners;
const NAMES = Object.keys(runners) as Runner[];

/** µs of CPU per review over `REVIEWS` reviews. */
function cpuPerReview(run: () => unknown): number {
  const start = process.cpuUsage();
  for (let i = 0; i < REVIEWS; i++) run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / REVIEWS;
}

for (const name of NAMES) cpuPerReview(runners[name]); // warm-up: optimised code for all three
const rounds: Record<Runner, number>[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const order = NAMES.map((_, i) => NAMES[(i + round) % NAMES.length] as Runner);
  const result = {} as Record<Runner, number>;
  for (const name of order) result[name] = cpuPerReview(runners[name]);
  rounds.push(result);
}

const f = (n: number) => n.toFixed(1);
const per = (name: Runner) => spread(rounds.map((r) => r[name]));
const ratio = (name: Runner) => median(rounds.map((r) => r[name])) / median(rounds.map((r) => r.peer));
const twinPerRound = rounds.map((r) => r.twin / r.peer);
console.log(`${ROUNDS} rounds × ${REVIEWS} reviews, CPU µs per review (median, min–max):`);
for (const name of NAMES) {
  const s = per(name);
  console.log(`  ${name.padEnd(9)} ${f(s.median)} (${f(s.min)}–${f(s.max)})  ${f(ratio(name))}× the peer`);
}
const noise = noiseFloor(ratio('twin'), twinPerRound);
const gap = ratio('outrigger') - 1;
console.log(`Outrigger's core ${f(ratio('outrigger'))}× the independent peer's CPU per review; noise floor ±${noise.toFixed(2)}: ${Math.abs(gap) > noise ? 'DECIDED' : 'UNDECIDED'}`);
