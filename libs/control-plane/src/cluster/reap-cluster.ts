// The reaper of one local cluster (started by startCluster, see cluster-reaper.ts): waits for the
// cluster's owner; if it dies without stopping the cluster, takes the pid file over (so a new start
// waits rather than races it) and removes everything the cluster left.
import { writeFileSync } from 'node:fs';
import { processAlive } from '../managed-process.js';
import { clusterLeftovers, tearDownCluster } from './cluster.js';
import { pidFileOwner, REAPER_ENV, reaperStep } from './cluster-reaper.js';

const say = (line: string) => void process.stderr.write(`[cluster reaper] ${line}\n`);
// The terminal may be gone (its owner hung up): a failed write must not end the removal.
process.stderr.on('error', () => undefined);

const owner = Number(process.env[REAPER_ENV.owner]);
const dir = process.env[REAPER_ENV.dir] ?? '';
const binDir = process.env[REAPER_ENV.binDir] ?? '';
if (!Number.isInteger(owner) || owner <= 0 || !dir || !binDir) {
  say(`needs ${Object.values(REAPER_ENV).join(', ')}; got owner=${process.env[REAPER_ENV.owner] ?? ''} dir=${dir} binDir=${binDir}`);
  process.exit(2);
}

for (;;) {
  const step = reaperStep(owner, pidFileOwner(dir), processAlive(owner));
  if (step === 'leave') process.exit(0);
  if (step === 'reap') break;
  await new Promise((r) => setTimeout(r, 500));
}

writeFileSync(`${dir}.pid`, String(process.pid));
say(`pid ${owner} ended without stopping its cluster (${dir}): removing everything it created`);
try {
  await tearDownCluster(dir, binDir);
} catch (error) {
  say(`removal failed: ${(error as Error).message}`);
}
const left = clusterLeftovers(dir);
say(left.length === 0 ? 'removed; nothing of the cluster is left' : `still left (npm run cluster -- --teardown removes it): ${left.join('; ')}`);
process.exit(left.length === 0 ? 0 : 1);
