/**
 * Fuzzes the built injector's POST /mutate with hostile bodies (the generator of the fuzz e2e) and
 * exits non-zero on any 5xx, connection error, hang or crash. Every field of every review fixture
 * is first replaced in turn by each kind of wrong value; seeded random cases fill up the count.
 *
 *   npm run fuzz -- [--count 100000] [--seed N] [--concurrency 16]
 */
import { existsSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { get } from 'node:https';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { CATEGORIES, hostileCases } from './hostile-reviews.ts';
import { startInjector } from '../e2e/injector-process.ts';
import { fuzzAgent, runCases, violation } from './send.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '20251122' },
    concurrency: { type: 'string', default: '16' },
    'timeout-ms': { type: 'string', default: '10000' },
  },
});
const count = Number(values.count);
const seed = Number(values.seed);
const concurrency = Number(values.concurrency);
const timeoutMs = Number(values['timeout-ms']);
if (![count, seed, concurrency, timeoutMs].every(Number.isSafeInteger) || count < 1 || concurrency < 1) {
  console.error('usage: npm run fuzz -- [--count N] [--seed N] [--concurrency N] [--timeout-ms N]');
  process.exit(2);
}

const repoRoot = new URL('../../../', import.meta.url).pathname;
if (!existsSync(new URL('dist/apps/injector/main.js', `file://${repoRoot}`))) {
  console.log('dist/apps/injector/main.js is missing: building it');
  execFileSync('npx', ['nx', 'run', 'injector:build'], { cwd: repoRoot, stdio: 'inherit' });
}


const KINDS = ['200', '4xx', '5xx', 'other-status', 'error', 'timeout'] as const;
const table = new Map<string, Record<(typeof KINDS)[number], number>>();
const failures: string[] = [];
let violationCount = 0;

const injector = await startInjector();
console.log(`injector pid ${injector.process.pid} at ${injector.baseUrl} (log ${injector.logFile}); ${count} cases, seed ${seed}, concurrency ${concurrency}`);
const agent = fuzzAgent(injector.ca, concurrency);
// A crash ends the run at once (instead of 100 000 refused connections) and is reported with its signal.
let exit: string | undefined;
void injector.process.whenExited().then((code) => {
  exit ??= `injector exited (code ${code}) after ${done} cases; see ${injector.logFile}`;
});
function* untilExit<T>(cases: Iterable<T>): Generator<T> {
  for (const c of cases) {
    if (exit) return;
    yield c;
  }
}
const started = performance.now();
let done = 0;
const progress = setInterval(() => console.log(`  ${done}/${count} (${((done / (performance.now() - started)) * 1000).toFixed(0)}/s)`), 10_000);
try {
  await runCases(untilExit(hostileCases({ seed, count, walk: 'all' })), { agent, url: `${injector.baseUrl}/mutate`, concurrency, timeoutMs }, (c, o) => {
    done++;
    const row = table.get(c.category) ?? Object.fromEntries(KINDS.map((k) => [k, 0]));
    row[o.kind]++;
    table.set(c.category, row as Record<(typeof KINDS)[number], number>);
    const problem = violation(c, o);
    if (problem) {
      violationCount++;
      if (failures.length < 30) failures.push(`[${c.category}] ${c.label}: ${problem}`);
    }
  });
} finally {
  clearInterval(progress);
  agent.destroy();
}
const seconds = (performance.now() - started) / 1000;

const alive = injector.process.running;
if (exit) console.log(`\nCRASH: ${exit}`);
const health = alive
  ? await new Promise<number>((resolve) => {
      const req = get(`${injector.baseUrl}/healthz`, { ca: injector.ca, timeout: 5_000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve(0));
    })
  : 0;
await injector.process.stop();

const pad = (s: string | number, n: number) => String(s).padStart(n);
console.log(`\n${'category'.padEnd(16)}${KINDS.map((k) => pad(k, 13)).join('')}${pad('total', 9)}`);
const totals = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<(typeof KINDS)[number], number>;
for (const category of CATEGORIES) {
  const row = table.get(category);
  if (!row) continue;
  for (const k of KINDS) totals[k] += row[k];
  console.log(`${category.padEnd(16)}${KINDS.map((k) => pad(row[k], 13)).join('')}${pad(KINDS.reduce((n, k) => n + row[k], 0), 9)}`);
}
console.log(`${'TOTAL'.padEnd(16)}${KINDS.map((k) => pad(totals[k], 13)).join('')}${pad(done, 9)}`);
console.log(`\n${done} cases in ${seconds.toFixed(1)} s (${(done / seconds).toFixed(0)}/s); process alive: ${alive}; /healthz: ${health}`);
console.log(`contract violations: ${violationCount}`);
// violation() flags every 5xx, error and timeout, except the over-limit body's early close (413, then EPIPE).
const violations = violationCount > 0;
if (failures.length > 0) {
  console.log(`\nfirst ${failures.length} violations:`);
  for (const f of failures) console.log(`  ${f}`);
}
if (violations || !alive || health !== 200) {
  console.log(`\nFAIL (the injector's log is kept: ${injector.logFile})`);
  process.exit(1);
}
// Its certificate, key and log: nothing to look at when the run passed.
rmSync(dirname(injector.logFile), { recursive: true, force: true });
console.log('\nOK: no 5xx, no connection errors, no hangs, no pod admitted after an internal error, injector healthy');
