import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { freePort, repoRoot } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startInjector, type RunningInjector } from './injector-process.js';
import { eventually } from './eventually.js';

// The injector reading AgentProfiles through a real kube-apiserver: what it serves before it can,
// and how a new, edited, broken and deleted profile take effect without a restart.
const cp = inject('controlPlane');
const dir = mkdtempSync(join(tmpdir(), 'injector-profiles-'));
const REVIEW = readFileSync(join(repoRoot(), 'libs/admission/fixtures/reviews/v1-pod-opted-in.json'));
const started: RunningInjector[] = [];

function kubectl(...args: string[]): string {
  return execFileSync(join(cp.binDir, 'kubectl'), ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

interface Reply {
  readonly status: number;
  readonly body: string;
}

function call(injector: RunningInjector, method: string, path: string, body?: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, injector.baseUrl);
    const req = request(url, { method, ca: injector.ca, headers: body ? { 'content-type': 'application/json' } : {}, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    // The API server gives up on a webhook after its timeout (10 s at most): the injector must answer sooner.
    req.on('timeout', () => req.destroy(new Error(`${path}: no answer within the webhook timeout`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The review's response, with the JSON patch decoded. */
async function review(injector: RunningInjector): Promise<{ allowed: boolean; status?: { code: number; message: string }; patch: string }> {
  const reply = await call(injector, 'POST', '/mutate', REVIEW);
  expect(reply.status).toBe(200);
  const response = (JSON.parse(reply.body) as { response: { allowed: boolean; status?: { code: number; message: string }; patch?: string } }).response;
  return { ...response, patch: response.patch ? Buffer.from(response.patch, 'base64').toString('utf8') : '' };
}

beforeAll(() => {
  kubectl('apply', '--server-side', '-k', join(repoRoot(), 'deploy/base/crd'));
  kubectl('wait', '--for=condition=Established', '--timeout=60s', 'customresourcedefinitions/agentprofiles.outrigger.dev');
});

afterAll(async () => {
  await Promise.all(started.map((s) => s.process.stop()));
  kubectl('delete', '--ignore-not-found', 'agentprofile', 'xxl-job');
});

describe('injector with AgentProfiles from the API', () => {
  it('while the API server cannot be reached: not ready, and an opted-in pod is refused at once with the reason', async () => {
    // The control plane's kubeconfig, pointed at a port nothing listens on.
    const unreachable = join(dir, 'unreachable.kubeconfig');
    const closedPort = await freePort();
    writeFileSync(unreachable, readFileSync(cp.kubeconfigPath, 'utf8').replace(/server: https:\/\/[^\s]+/, `server: https://127.0.0.1:${closedPort}`));
    const injector = await startInjector(undefined, { PROFILES_FILE: '', KUBECONFIG: unreachable });
    started.push(injector);

    const readyz = await call(injector, 'GET', '/readyz');
    expect(readyz.status).toBe(503);
    expect(JSON.parse(readyz.body).error.profiles.reason).toMatch(/^agent profiles are not loaded yet: /);

    const refused = await review(injector);
    expect(refused.allowed).toBe(false);
    expect(refused.status?.code).toBe(503);
    expect(refused.status?.message).toMatch(/^outrigger injector: agent profiles are not loaded yet: .*; retry shortly$/);
    await injector.process.stop();
  });

  it('takes a new AgentProfile, an edit and a delete within seconds, and keeps the last good generation through a bad edit', async () => {
    const injector = await startInjector(undefined, { PROFILES_FILE: '', KUBECONFIG: cp.kubeconfigPath });
    started.push(injector);
    // Once listed (startInjector waits for /healthz, not for the list), with no profile: ready, and nothing to inject.
    const readyz = await eventually('the AgentProfile list', async () => call(injector, 'GET', '/readyz'), (r) => r.status === 200);
    expect(JSON.parse(readyz.body).details.profiles).toEqual({ status: 'up', source: 'AgentProfiles', names: [], generations: {}, version: expect.stringMatching(/^\d+\.\d+\.\d+\+dev$/) });
    expect(await review(injector)).toMatchObject({ allowed: true, patch: '' });

    kubectl('apply', '--server-side', '-f', REFERENCE_PROFILE_FILE);
    await eventually('the profile to be in force', () => review(injector), (r) => r.patch.includes('"ghcr.io/outrigger/xxl-agent:0.1.0"'));

    kubectl('patch', 'agentprofile', 'xxl-job', '--type=merge', '-p', '{"spec":{"container":{"image":"ghcr.io/outrigger/xxl-agent:1.0.1"}}}');
    await eventually('the edit to be in force', () => review(injector), (r) => r.patch.includes('"ghcr.io/outrigger/xxl-agent:1.0.1"'));

    // The API server cannot tell that this pattern is not a regular expression; the injector can.
    kubectl('patch', 'agentprofile', 'xxl-job', '--type=json', '-p', '[{"op":"add","path":"/spec/parameters/2/pattern","value":"(unclosed"}]');
    await eventually('the bad generation to be refused', () => call(injector, 'GET', '/metrics'), (m) => /outrigger_injector_profile_reloads_total\{result="failure"[^}]*\} [1-9]/.test(m.body));
    expect((await review(injector)).patch).toContain('"ghcr.io/outrigger/xxl-agent:1.0.1"');
    expect(readFileSync(injector.logFile, 'utf8')).toMatch(/AgentProfile xxl-job generation 3: spec\.parameters\[2\]\.pattern: is not an RE2 regular expression .*\(generation 2 stays in force\)/);

    kubectl('delete', 'agentprofile', 'xxl-job');
    await eventually('the deleted profile to be out of force', () => review(injector), (r) => r.allowed && r.patch === '');
  });

  it('gives a staged change (canary) to the namespaces its selector picks, following their labels, and the agent as before to the others', async () => {
    const injector = await startInjector(undefined, { PROFILES_FILE: '', KUBECONFIG: cp.kubeconfigPath });
    started.push(injector);
    const [ring, plain] = ['canary-ring', 'canary-plain'];
    for (const ns of [ring, plain]) kubectl('create', 'namespace', ns);
    kubectl('label', 'namespace', ring, plain, 'outrigger.dev/injection=enabled');
    kubectl('label', 'namespace', ring, 'ring=canary');
    const profile = readFileSync(REFERENCE_PROFILE_FILE, 'utf8').replace(/^spec:\n/m, 'spec:\n  canary:\n    namespaceSelector: {matchLabels: {ring: canary}}\n    image: ghcr.io/outrigger/xxl-agent:2.0.0\n');
    writeFileSync(join(dir, 'staged.yaml'), profile);
    kubectl('apply', '--server-side', '-f', join(dir, 'staged.yaml'));
    const reviewIn = async (namespace: string) => {
      const body = JSON.parse(REVIEW.toString('utf8')) as { request: { namespace: string; object: { metadata: { namespace: string } } } };
      body.request.namespace = namespace;
      body.request.object.metadata.namespace = namespace;
      const reply = await call(injector, 'POST', '/mutate', Buffer.from(JSON.stringify(body)));
      const patch = (JSON.parse(reply.body) as { response: { patch?: string } }).response.patch;
      return patch ? Buffer.from(patch, 'base64').toString('utf8') : '';
    };
    try {
      await eventually('the canary agent in the namespace it selects', () => reviewIn(ring), (patch) => patch.includes('"ghcr.io/outrigger/xxl-agent:2.0.0"'));
      expect(await reviewIn(plain)).toContain('"ghcr.io/outrigger/xxl-agent:0.1.0"');
      // A namespace labelled into the ring gets it from then on; labelled out, the agent as before.
      kubectl('label', 'namespace', plain, 'ring=canary');
      await eventually('the canary agent once the namespace is labelled', () => reviewIn(plain), (patch) => patch.includes('"ghcr.io/outrigger/xxl-agent:2.0.0"'));
      kubectl('label', 'namespace', ring, 'ring-');
      await eventually('the agent as before once the label is gone', () => reviewIn(ring), (patch) => patch.includes('"ghcr.io/outrigger/xxl-agent:0.1.0"'));
      // Scoped to namespaces labelled ring=canary: only those get any agent of it.
      writeFileSync(join(dir, 'scoped.yaml'), profile.replace(/^spec:\n/m, 'spec:\n  namespaceSelector: {matchLabels: {ring: canary}}\n'));
      kubectl('apply', '--server-side', '-f', join(dir, 'scoped.yaml'));
      await eventually('no agent outside the profile\'s namespaces', () => reviewIn(ring), (patch) => patch === '');
      expect(await reviewIn(plain)).toContain('"ghcr.io/outrigger/xxl-agent:2.0.0"');
    } finally {
      kubectl('delete', '--ignore-not-found', 'agentprofile', 'xxl-job');
      kubectl('delete', 'namespace', ring, plain, '--wait=false');
    }
  });
});
