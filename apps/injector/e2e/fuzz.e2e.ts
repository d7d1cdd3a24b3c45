import { get } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATEGORIES, hostileCases, loadFixtures, type Category } from '../fuzz/hostile-reviews.ts';
import { startInjector, type RunningInjector } from './injector-process.ts';
import { fuzzAgent, runCases, violation, type OutcomeKind } from '../fuzz/send.ts';

/**
 * Hostile bodies against the built injector over HTTPS: every answer is a well-formed
 * AdmissionReview echoing uid and apiVersion (never one admitted after an internal error), or a 4xx
 * with a JSON message; never a 5xx, a reset or a hang, and the process survives. Deterministic:
 * fixed seed, fixed count.
 */
const SEED = 20_251_122;
const COUNT = 3_000;
const TIMEOUT_MS = 10_000;

function healthz(url: string, ca: string): Promise<number> {
  return new Promise((done, fail) => {
    const req = get(`${url}/healthz`, { ca, timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('healthz timed out')));
    req.on('error', fail);
  });
}

describe('POST /mutate under hostile input', () => {
  let injector: RunningInjector;

  beforeAll(async () => {
    injector = await startInjector();
  });

  afterAll(async () => {
    await injector?.process.stop();
  });

  it(`answers ${COUNT} hostile bodies with 200 or a 4xx, never a 5xx, reset or hang`, async () => {
    const agent = fuzzAgent(injector.ca, 8);
    const counts = new Map<string, number>();
    const failures: string[] = [];
    const seen = new Set<Category>();
    let walked = 0;
    let closedEarly = 0; // the over-limit body: 413 and close, possibly seen as EPIPE by the writer
    await runCases(hostileCases({ seed: SEED, count: COUNT }), { agent, url: `${injector.baseUrl}/mutate`, concurrency: 8, timeoutMs: TIMEOUT_MS }, (c, o) => {
      seen.add(c.category);
      if (c.label.endsWith('(walk)')) walked++;
      if (c.mayCloseEarly && o.kind === 'error') closedEarly++;
      const key = `${c.category}/${o.kind}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      const problem = violation(c, o);
      if (problem && failures.length < 20) failures.push(`[${c.category}] ${c.label}: ${problem}`);
    });
    agent.destroy();

    expect(failures).toEqual([]);
    expect([...seen].sort()).toEqual([...CATEGORIES].sort());
    // Every field of v1-pod-opted-in.json was replaced in turn by each of the 8 kinds of wrong value.
    expect(walked).toBe((loadFixtures().find((f) => f.name === 'v1-pod-opted-in.json')?.paths.length ?? 0) * 8);
    const total = (kind: OutcomeKind) => [...counts].filter(([k]) => k.endsWith(`/${kind}`)).reduce((n, [, v]) => n + v, 0);
    expect(total('200') + total('4xx') + closedEarly).toBe(COUNT);
    expect(closedEarly).toBeLessThanOrEqual(1);
    // Both paths are exercised: plenty of reviews are admitted, plenty are refused.
    expect(total('200')).toBeGreaterThan(COUNT / 10);
    expect(total('4xx')).toBeGreaterThan(COUNT / 10);
  });

  it('is still alive and healthy afterwards', async () => {
    expect(injector.process.running).toBe(true);
    expect(await healthz(injector.baseUrl, injector.ca)).toBe(200);
  });
});
