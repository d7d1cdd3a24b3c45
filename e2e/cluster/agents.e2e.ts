import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sampleBindings } from './binding-sampler.ts';
import { churnPods } from './pod-churn.ts';
import { agentOf, boundServiceAccounts, createNamespace, eventually, injectorsHold, injectorsHoldNamespaces, kubectl, outrigger, outriggerAsync, type PodJson, pods, scaleOutrigger } from './support.ts';

// Day 2 on a real cluster: the agent's image changes, `outrigger agents` tells which workloads run
// the earlier one, `outrigger rollout restart` replaces them through their own rollouts while pods
// keep being created; pods created while the webhook was off are found by `outrigger check` and
// fixed by the command it prints.
/** The reference profile's agent as the local overlay installs it, and another tag of the same image (nothing is pulled). */
const AGENT = kubectl(['get', 'agentprofile', 'xxl-job', '-o', 'jsonpath={.spec.container.image}']);
const NEXT = `${AGENT.slice(0, AGENT.lastIndexOf(':'))}:next`;
const tagNext = () => execFileSync(inject('cluster').ctr[0] ?? 'ctr', [...inject('cluster').ctr.slice(1), 'images', 'tag', '--force', AGENT, NEXT], { stdio: 'pipe' });
const WEBHOOK = 'mutatingwebhookconfiguration/outrigger-injector';
const OPTED_IN = { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin', 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'day2' };
const APP = { name: 'app', image: 'localhost/busybox:local', command: ['sleep', '3600'] };

const template = (app: string) => ({ metadata: { labels: { app }, annotations: OPTED_IN }, spec: { terminationGracePeriodSeconds: 1, containers: [APP] } });
const workloads = (app: string) => [
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `${app}-web` }, spec: { replicas: 3, selector: { matchLabels: { app: `${app}-web` } }, template: template(`${app}-web`) } },
  { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: `${app}-db` }, spec: { replicas: 1, serviceName: `${app}-db`, selector: { matchLabels: { app: `${app}-db` } }, template: template(`${app}-db`) } },
  { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: `${app}-node` }, spec: { selector: { matchLabels: { app: `${app}-node` } }, template: template(`${app}-node`) } },
];

interface AgentsJson {
  readonly pods: number;
  readonly workloads: readonly { kind: string; name: string; pods: number; current: number; outdated: number; missing: number }[];
}
const agents = (ns: string, ...flags: string[]): AgentsJson => {
  const result = outrigger(['agents', '-n', ns, '-o', 'json', ...flags]);
  if (result.code !== 0) throw new Error(`outrigger agents: ${result.stderr}`);
  return JSON.parse(result.stdout) as AgentsJson;
};
const counts = (a: AgentsJson) => Object.fromEntries(a.workloads.map((w) => [`${w.kind}/${w.name}`, [w.current, w.outdated, w.missing]]));
/** The agent image a new pod in `ns` gets (server-side dry run: the webhook runs, nothing is stored). */
const injectedImage = (ns: string) =>
  agentOf(JSON.parse(kubectl(['create', '-n', ns, '--dry-run=server', '-o', 'json', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', annotations: OPTED_IN }, spec: { containers: [APP] } }))) as PodJson)?.image;
/** Patches the profile, then waits for every injector replica to hold the change: a pod created next may reach either. */
const changeProfile = async (...patch: string[]) => {
  kubectl(['patch', 'agentprofile', 'xxl-job', ...patch]);
  await injectorsHold('xxl-job');
};
const setAgentImage = (image: string) => changeProfile('--type=merge', '-p', JSON.stringify({ spec: { container: { image } } }));
const rollouts = (ns: string, app: string) => {
  for (const w of [`deployment/${app}-web`, `statefulset/${app}-db`, `daemonset/${app}-node`]) kubectl(['rollout', 'status', '-n', ns, w, '--timeout=180s']);
};

/** The AgentProfile's counts (status.agents, the rbac-syncer's): cluster-wide, so other suites' pods count too. */
const profileCounts = () => (JSON.parse(kubectl(['get', 'agentprofile', 'xxl-job', '-o', 'json'])) as { status?: { agents?: { current: number; outdated: number; missing: number } } }).status?.agents ?? { current: 0, outdated: 0, missing: 0 };

const namespaces: string[] = [];
afterAll(() => {
  for (const ns of namespaces) kubectl(['delete', 'namespace', ns, '--wait=false']);
});

describe('outdated agents: found, restarted through their workloads while pods keep being created', () => {
  let ns: string;
  let churn: string;
  beforeAll(() => {
    ns = createNamespace('day2');
    churn = createNamespace('day2-churn');
    namespaces.push(ns, churn);
    kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: workloads('a') }));
    kubectl(['create', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bare', annotations: OPTED_IN }, spec: { terminationGracePeriodSeconds: 1, containers: [APP] } }));
    rollouts(ns, 'a');
  });
  afterAll(() => setAgentImage(AGENT));

  it('lists exactly the workloads whose agents the profile change left behind, and restarts them to 0 outdated with 0 failed creates', async () => {
    expect(counts(agents(ns))).toEqual({ 'DaemonSet/a-node': [1, 0, 0], 'Deployment/a-web': [3, 0, 0], 'Pod/bare': [1, 0, 0], 'StatefulSet/a-db': [1, 0, 0] });

    tagNext();
    await setAgentImage(NEXT);
    await eventually(() => expect(injectedImage(ns)).toBe(NEXT), 'the injector to inject the changed agent', 60_000);

    // The status counts them as outdated within seconds (at least these 6 pods).
    const before = await eventually(() => {
      const c = profileCounts();
      expect(c.outdated).toBeGreaterThanOrEqual(6);
      return c;
    }, 'the status to count the outdated pods', 30_000);

    const outdated = outrigger(['agents', '-n', ns, '--outdated']);
    expect(outdated.code, outdated.stderr).toBe(0);
    expect(outdated.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/).slice(1, 7).join(' '))).toEqual([
      'DaemonSet/a-node xxl-job 1 0 1 0',
      'Deployment/a-web xxl-job 3 0 3 0',
      'Pod/bare xxl-job 1 0 1 0',
      'StatefulSet/a-db xxl-job 1 0 1 0',
    ]);

    let stop!: () => void;
    const window = new Promise<void>((resolve) => (stop = resolve));
    const load = churnPods(churn, window);
    const restart = await outriggerAsync(['rollout', 'restart', '--outdated', '-n', ns, '--max-in-flight', '2', '--timeout', '4m']);
    stop();
    const churned = await load;
    expect(restart.code, restart.stdout + restart.stderr).toBe(0);
    expect(restart.stdout).toContain(`skip     ${ns}/Pod/bare (1 pod): a bare pod: nothing re-creates it`);
    for (const w of ['Deployment/a-web (3 pods)', 'StatefulSet/a-db (1 pod)', 'DaemonSet/a-node (1 pod)']) expect(restart.stdout).toContain(`restart  ${ns}/${w}`);
    expect(restart.stdout).toMatch(/\nrestarted 3, failed 0, timed out 0, skipped 1\n$/);
    expect(churned.created).toBeGreaterThan(0);
    expect(churned.errors).toEqual([]);
    expect(churned.failed).toBe(0);
    expect(churned.withoutAgent).toBe(0);

    await eventually(() => expect(counts(agents(ns, '--outdated'))).toEqual({ 'Pod/bare': [0, 1, 0] }), 'only the bare pod to be outdated', 60_000);
    expect(counts(agents(ns))).toEqual({ 'DaemonSet/a-node': [1, 0, 0], 'Deployment/a-web': [3, 0, 0], 'Pod/bare': [0, 1, 0], 'StatefulSet/a-db': [1, 0, 0] });
    // And so does the status: the 5 restarted pods are no longer outdated.
    await eventually(() => expect(profileCounts().outdated).toBeLessThanOrEqual(before.outdated - 5), 'the status to count them current', 30_000);
    // A pod the restart replaced may still be terminating (the rollout is done once the new ones are ready): the live ones count.
    for (const app of ['a-web', 'a-db', 'a-node']) for (const pod of pods(ns, `app=${app}`).filter((p) => !p.metadata.deletionTimestamp)) expect(agentOf(pod)?.image).toBe(NEXT);
  });
});

describe('missing agents: pods created while the webhook was off, found by check, fixed by the command it prints', () => {
  let ns: string;
  let failurePolicy: string;
  beforeAll(() => {
    ns = createNamespace('day2-missing');
    namespaces.push(ns);
    failurePolicy = kubectl(['get', WEBHOOK, '-o', 'jsonpath={.webhooks[0].failurePolicy}']);
  });
  afterAll(async () => {
    kubectl(['patch', WEBHOOK, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/webhooks/0/failurePolicy', value: failurePolicy }])]);
    await scaleOutrigger('outrigger-injector', 2);
  });

  it('check fails naming the workload; with the injector back, its fix restarts them with the agent', async () => {
    kubectl(['patch', WEBHOOK, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Ignore' }])]);
    await scaleOutrigger('outrigger-injector', 0);
    kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: workloads('m') }));
    rollouts(ns, 'm');
    expect(counts(agents(ns))).toEqual({ 'DaemonSet/m-node': [0, 0, 1], 'Deployment/m-web': [0, 0, 3], 'StatefulSet/m-db': [0, 0, 1] });

    // The status counts them, and the owner hears of it: a Warning on the Deployment, not its ReplicaSet.
    const missingBefore = await eventually(() => {
      const c = profileCounts();
      expect(c.missing).toBeGreaterThanOrEqual(5);
      return c.missing;
    }, 'the status to count the missing agents', 30_000);
    await eventually(() => {
      const events = JSON.parse(kubectl(['get', 'events', '-n', ns, '--field-selector', 'reason=AgentMissing,involvedObject.kind=Deployment', '-o', 'json'])) as { items: { involvedObject: { name: string }; type: string; message: string }[] };
      expect(events.items.map((e) => [e.involvedObject.name, e.type])).toContainEqual(['m-web', 'Warning']);
      expect(events.items[0]?.message).toMatch(new RegExp(`with the injector serving, restart them to get it: outrigger rollout restart --missing --profile \\S+ -n ${ns}$`));
    }, 'an AgentMissing event on the Deployment', 30_000);

    const check = outrigger(['check', '--output', 'json']);
    expect(check.code).toBe(1);
    const line = (JSON.parse(check.stdout) as { checks: { check: string; result: string; message: string; fix?: string }[] }).checks.find((c) => c.check === 'agents-missing');
    expect(line?.result).toBe('fail');
    expect(line?.message).toMatch(new RegExp(`^5 live opted-in pod\\(s\\) run without their agent, in 3 workload\\(s\\): ${ns}/Deployment/m-web \\(3, xxl-job\\), `));
    expect(line?.fix).toBe(`outrigger rollout restart --missing -n ${ns}`);

    kubectl(['patch', WEBHOOK, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/webhooks/0/failurePolicy', value: failurePolicy }])]);
    await scaleOutrigger('outrigger-injector', 2);
    await eventually(() => expect(injectedImage(ns)).toBe(AGENT), 'the injector to serve again', 60_000);
    // The fix exactly as printed.
    const [tool, ...args] = (line?.fix ?? '').split(' ');
    expect(tool).toBe('outrigger');
    const fixed = await outriggerAsync(args);
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
    expect(fixed.stdout).toMatch(/\nrestarted 3, failed 0, timed out 0, skipped 0\n$/);
    await eventually(() => expect(counts(agents(ns))).toEqual({ 'DaemonSet/m-node': [1, 0, 0], 'Deployment/m-web': [3, 0, 0], 'StatefulSet/m-db': [1, 0, 0] }), 'every pod to carry the agent', 60_000);
    await eventually(() => expect(profileCounts().missing).toBeLessThanOrEqual(missingBefore - 5), 'the status to count them current', 30_000);
    const after = (JSON.parse(outrigger(['check', '--output', 'json']).stdout) as { checks: { check: string; result: string }[] }).checks.find((c) => c.check === 'agents-missing');
    expect(after?.result).toBe('pass');
  });
});

describe('a canary to one namespace: only its new pods get the new agent; rolled back, staged again and promoted, with no live agent ever unbound', () => {
  const RING = 'outrigger-e2e/ring';
  const canary = { namespaceSelector: { matchLabels: { [RING]: 'true' } }, image: NEXT };
  const stage = () => changeProfile('--type=merge', '-p', JSON.stringify({ spec: { canary } }));
  const unstage = () => changeProfile('--type=json', '-p', JSON.stringify([{ op: 'remove', path: '/spec/canary' }]));
  /** The agents of the Deployment's pods once its rollout is over (no pod terminating). */
  const images = (ns: string, expected: string[]) =>
    eventually(() => expect(pods(ns, 'app=c-web').filter((p) => !(p.metadata as { deletionTimestamp?: string }).deletionTimestamp).map((p) => agentOf(p)?.image)).toEqual(expected), `the agents in ${ns}`, 60_000);
  const restart = (ns: string) => {
    kubectl(['rollout', 'restart', '-n', ns, 'deployment/c-web']);
    kubectl(['rollout', 'status', '-n', ns, 'deployment/c-web', '--timeout=180s']);
  };
  const profileStatus = () => (JSON.parse(kubectl(['get', 'agentprofile', 'xxl-job', '-o', 'json'])) as { status?: { agents?: { canary?: number; outdatedRevisions?: { revision: string }[] }; observedGeneration?: number } }).status;
  let ring: string;
  let rest: string;
  beforeAll(async () => {
    tagNext();
    ring = createNamespace('canary-ring');
    rest = createNamespace('canary-rest');
    namespaces.push(ring, rest);
    kubectl(['label', 'namespace', ring, `${RING}=true`]);
    await injectorsHoldNamespaces();
    for (const ns of [ring, rest]) {
      kubectl(['create', 'serviceaccount', 'agent', '-n', ns]);
      const web = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'c-web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'c-web' } }, template: { ...template('c-web'), spec: { ...template('c-web').spec, serviceAccountName: 'agent' } } } };
      kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify(web));
    }
    for (const ns of [ring, rest]) kubectl(['rollout', 'status', '-n', ns, 'deployment/c-web', '--timeout=180s']);
  });
  afterAll(async () => {
    if (kubectl(['get', 'agentprofile', 'xxl-job', '-o', 'jsonpath={.spec.canary}'])) await unstage();
    await setAgentImage(AGENT);
  });

  it('stage, roll back, stage, promote: each namespace gets the agent it should, and both ServiceAccounts stay bound, sampled every 200 ms', async () => {
    await eventually(() => expect(boundServiceAccounts()).toEqual(expect.arrayContaining([`${ring}/agent`, `${rest}/agent`])), 'both ServiceAccounts bound', 60_000);
    let stop!: () => void;
    const sampling = sampleBindings([ring, rest], { binding: 'xxl-agent-exec', agent: 'xxl-agent', intervalMs: 200, until: new Promise<void>((resolve) => (stop = resolve)) });
    try {
      // Staged: new pods in the ring namespace get the canary agent, and only they.
      await stage();
      await eventually(() => expect(injectedImage(ring)).toBe(NEXT), 'the canary agent injected in the ring namespace', 60_000);
      expect(injectedImage(rest)).toBe(AGENT);
      const restPods = pods(rest, 'app=c-web').map((p) => p.metadata.name).sort();
      restart(ring);
      await images(ring, [NEXT, NEXT]);
      await images(rest, [AGENT, AGENT]);
      expect(pods(rest, 'app=c-web').map((p) => p.metadata.name).sort()).toEqual(restPods);
      await eventually(() => expect(profileStatus()?.agents?.canary).toBeGreaterThanOrEqual(2), 'the status to count the canary pods', 30_000);

      // Rolled back: the ring's canary pods are outdated, and restarting them brings the agent back.
      await unstage();
      await eventually(() => expect(injectedImage(ring)).toBe(AGENT), 'the ring namespace back on the agent', 60_000);
      await eventually(() => expect(counts(agents(ring, '--outdated'))).toEqual({ 'Deployment/c-web': [0, 2, 0] }), 'the canary pods outdated', 60_000);
      const back = await outriggerAsync(['rollout', 'restart', '--outdated', '-n', ring, '--timeout', '3m']);
      expect(back.code, back.stdout + back.stderr).toBe(0);
      await images(ring, [AGENT, AGENT]);

      // Staged again and promoted: the canary's fields move into the agent, so the ring's pods are current as they are.
      await stage();
      await eventually(() => expect(injectedImage(ring)).toBe(NEXT), 'the canary agent injected again', 60_000);
      restart(ring);
      await changeProfile('--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/container/image', value: NEXT }, { op: 'remove', path: '/spec/canary' }]));
      await eventually(() => expect(injectedImage(rest)).toBe(NEXT), 'the promoted agent injected everywhere', 60_000);
      await eventually(() => expect(counts(agents(ring))).toEqual({ 'Deployment/c-web': [2, 0, 0] }), 'the ring pods current after the promotion', 60_000);
      await eventually(() => expect(counts(agents(rest, '--outdated'))).toEqual({ 'Deployment/c-web': [0, 2, 0] }), 'the other pods outdated', 60_000);
      const promoted = await outriggerAsync(['rollout', 'restart', '--outdated', '-n', rest, '--timeout', '3m']);
      expect(promoted.code, promoted.stdout + promoted.stderr).toBe(0);
      await images(rest, [NEXT, NEXT]);
    } finally {
      stop();
    }
    const sampled = await sampling;
    console.log(`canary: the bindings of ${ring} and ${rest} sampled ${sampled.samples} times in ${sampled.elapsedMs} ms, ${sampled.unbound.length} without a live agent's ServiceAccount`);
    expect(sampled.samples).toBeGreaterThan(0);
    expect(sampled.unbound).toEqual([]);
  });
});
