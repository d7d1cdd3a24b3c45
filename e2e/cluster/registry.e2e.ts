import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { createNamespace, eventually, kubectl, kubectlJson, OUTRIGGER_NAMESPACE, type PodJson } from './support.ts';

// The node pulls from the cluster's own registries and from nothing else: Outrigger's services run
// from the digests pushed there (tools/images/push.ts, by the suite's setup), a manifest naming any
// other registry fails at its first pull against a local port where nothing listens, and an agent
// image in the private registry is pulled with the profile's pull secret and refused without it.
const { registry, pinnedInstallDir = '' } = inject('cluster');
const execFileAsync = promisify(execFile);

interface PulledPod {
  readonly metadata: { readonly name: string };
  readonly spec: { readonly containers: readonly { name: string; image: string; imagePullPolicy: string }[] };
  readonly status: { readonly containerStatuses?: readonly { name: string; imageID: string; restartCount: number; state: { waiting?: { reason: string; message?: string } }; lastState?: unknown }[] };
}
interface EventList {
  readonly items: readonly { reason: string; message: string; involvedObject: { name: string } }[];
}
const events = (ns: string, pod: string) => kubectlJson<EventList>(['get', 'events', '-n', ns]).items.filter((e) => e.involvedObject.name === pod);

describe('the services', () => {
  it('run from the images pushed to the cluster registry, by digest, pulled Always', () => {
    // digests.env: <name>=<repository>@<digest>, as push.ts wrote it.
    const pushed = readFileSync(join(pinnedInstallDir, 'digests.env'), 'utf8').trim().split('\n').map((line) => line.split('=')[1] as string);
    expect(pushed).toHaveLength(3);
    for (const ref of pushed) expect(ref).toMatch(new RegExp(`^${registry.address}/outrigger/[a-z-]+@sha256:[0-9a-f]{64}$`));
    const running = kubectlJson<{ items: PulledPod[] }>(['get', 'pods', '-n', OUTRIGGER_NAMESPACE, '-l', 'app.kubernetes.io/part-of=outrigger']).items;
    expect(running.length).toBeGreaterThanOrEqual(3);
    for (const pod of running) {
      for (const c of pod.spec.containers) {
        expect(pushed, `${pod.metadata.name}/${c.name}`).toContain(c.image);
        expect(c.imagePullPolicy).toBe('Always');
        const digest = c.image.split('@')[1] as string;
        // The node's record of what it runs: the digest of the manifest it pulled.
        expect(pod.status.containerStatuses?.find((s) => s.name === c.name)?.imageID).toMatch(new RegExp(`@${digest}$`));
      }
    }
    // Pulled over the network from the registry, not found on the node.
    const pulled = kubectlJson<EventList>(['get', 'events', '-n', OUTRIGGER_NAMESPACE]).items.filter((e) => e.reason === 'Pulled' && e.message.includes(registry.address));
    expect(pulled.length).toBeGreaterThan(0);
  });
});

describe('another registry', () => {
  let ns: string;
  beforeAll(() => (ns = createNamespace('elsewhere', false)));
  afterAll(() => kubectl(['delete', 'namespace', ns, '--wait=false']));

  it.each([
    ['docker-hub', 'docker.io/library/nginx:1.27'],
    ['ghcr', 'ghcr.io/outrigger/injector:0.1.0'],
    ['by-digest', `quay.io/prometheus/busybox@sha256:${'0'.repeat(64)}`],
  ])('fails to pull %s at once, at the refusing local endpoint', async (name, image) => {
    kubectl(['run', name, '-n', ns, `--image=${image}`, '--restart=Never']);
    const failure = await eventually(() => {
      const failed = events(ns, name).find((e) => e.reason === 'Failed' && e.message.includes(image));
      if (!failed) throw new Error(`no Failed event for ${name} yet`);
      return failed.message;
    }, `the pull of ${image} fails`, 60_000);
    // Sent to a port on the host alias where nothing listens: the request never left the machine.
    expect(failure).toContain(`dial tcp ${registry.refusedEndpoint}: connect: connection refused`);
    // The pod's status follows the event.
    await eventually(() => expect(['ErrImagePull', 'ImagePullBackOff']).toContain(kubectlJson<PulledPod>(['get', 'pod', name, '-n', ns]).status.containerStatuses?.[0]?.state.waiting?.reason), `${name} waiting on its pull`, 30_000);
  });
});

describe('an agent image in the private registry (issue 30)', () => {
  const PROFILE = 'private-agent';
  const PREFIX = `${PROFILE}.outrigger.test/`;
  let withSecret: string;
  let withoutSecret: string;
  let digestRef: string;
  let authDir: string;

  beforeAll(async () => {
    // Pushed with the credentials, as a team pushes its agent: buildah with an auth file.
    authDir = mkdtempSync(join(tmpdir(), 'outrigger-registry-auth-'));
    const { username, password } = registry.credentials;
    const auth = Buffer.from(`${username}:${password}`).toString('base64');
    writeFileSync(join(authDir, 'auth.json'), JSON.stringify({ auths: { [registry.privateAddress]: { auth } } }), { mode: 0o600 });
    const { stdout } = await execFileAsync('bash', [join(repoRoot(), 'tools/images/push.sh'), `${registry.privateAddress}/team`, 'e2e', registry.certDir, 'stand-in-agent'], {
      env: { ...process.env, REGISTRY_AUTH_FILE: join(authDir, 'auth.json') },
      maxBuffer: 16 * 1024 * 1024,
    });
    digestRef = stdout.trim().split(' ')[1] as string;
    expect(digestRef).toMatch(new RegExp(`^${registry.privateAddress}/team/stand-in-agent@sha256:[0-9a-f]{64}$`));
    kubectl(['apply', '--server-side', '-f', '-'], stringify({
      apiVersion: 'outrigger.dev/v1alpha1',
      kind: 'AgentProfile',
      metadata: { name: PROFILE },
      spec: {
        annotationPrefix: PREFIX,
        container: {
          name: PROFILE,
          image: digestRef,
          imagePullPolicy: 'Always',
          resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '32Mi' } },
          securityContext: { runAsNonRoot: true, runAsUser: 65532, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
          // The stand-in exits at once without its target.
          env: [{ name: 'CONTAINER_NAME', value: 'app' }],
        },
        fieldEnv: [
          { env: 'NAMESPACE', fieldPath: 'metadata.namespace' },
          { env: 'POD_NAME', fieldPath: 'metadata.name' },
        ],
        imagePullSecrets: [{ name: 'team-registry' }],
      },
    }));
    withSecret = createNamespace('pull-secret');
    withoutSecret = createNamespace('no-pull-secret');
    kubectl(['create', 'secret', 'docker-registry', 'team-registry', '-n', withSecret, `--docker-server=${registry.privateAddress}`, `--docker-username=${username}`, `--docker-password=${password}`]);
  }, 600_000);

  afterAll(() => {
    rmSync(authDir, { recursive: true, force: true });
    kubectl(['delete', 'namespace', withSecret, withoutSecret, '--wait=false', '--ignore-not-found']);
    kubectl(['delete', 'agentprofile', PROFILE, '--ignore-not-found']);
  });

  /** An opted-in pod, created once the injector has the profile (it refuses pods it cannot inject). */
  async function optedIn(ns: string): Promise<void> {
    const pod = stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'app', annotations: { [`${PREFIX}enable`]: 'true' } }, spec: { containers: [{ name: 'app', image: 'localhost/busybox:local', imagePullPolicy: 'Never', command: ['sleep', '3600'] }] } });
    await eventually(() => {
      kubectl(['create', '-n', ns, '-f', '-'], pod);
      const created = kubectlJson<PodJson>(['get', 'pod', 'app', '-n', ns]);
      if (!created.spec.containers.some((c) => c.name === PROFILE)) {
        kubectl(['delete', 'pod', 'app', '-n', ns, '--now']);
        throw new Error('created before the injector had the profile');
      }
    }, 'the agent injected', 60_000);
  }

  it('is pulled with the pull secret the profile adds to the pod, and runs', async () => {
    await optedIn(withSecret);
    const status = await eventually(() => {
      const pod = kubectlJson<PulledPod>(['get', 'pod', 'app', '-n', withSecret]);
      const agent = pod.status.containerStatuses?.find((s) => s.name === PROFILE);
      if (!agent || !('running' in agent.state)) throw new Error(`agent ${JSON.stringify(agent?.state)}, last ${JSON.stringify(agent?.lastState)}`);
      return agent;
    }, 'the private agent running', 120_000);
    // Running, and not a crash loop caught between two restarts: still up, never restarted, moments later.
    await new Promise((r) => setTimeout(r, 3_000));
    const later = kubectlJson<PulledPod>(['get', 'pod', 'app', '-n', withSecret]).status.containerStatuses?.find((s) => s.name === PROFILE);
    expect({ running: later !== undefined && 'running' in later.state, restartCount: later?.restartCount }).toEqual({ running: true, restartCount: 0 });
    expect(status.imageID).toMatch(new RegExp(`@${digestRef.split('@')[1]}$`));
    expect(kubectlJson<{ spec: { imagePullSecrets?: { name: string }[] } }>(['get', 'pod', 'app', '-n', withSecret]).spec.imagePullSecrets).toEqual([{ name: 'team-registry' }]);
  });

  it('is refused without the secret: ErrImagePull, the registry asking for credentials', async () => {
    await optedIn(withoutSecret);
    const message = await eventually(() => {
      const failed = events(withoutSecret, 'app').find((e) => e.reason === 'Failed' && e.message.includes(digestRef));
      if (!failed) throw new Error('no Failed event yet');
      return failed.message;
    }, 'the pull refused', 120_000);
    expect(message).toMatch(/401 Unauthorized|no basic auth credentials/);
    await eventually(() => {
      const agent = kubectlJson<PulledPod>(['get', 'pod', 'app', '-n', withoutSecret]).status.containerStatuses?.find((s) => s.name === PROFILE);
      expect(['ErrImagePull', 'ImagePullBackOff']).toContain(agent?.state.waiting?.reason);
    }, 'the agent waiting on its pull', 30_000);
  });
});
