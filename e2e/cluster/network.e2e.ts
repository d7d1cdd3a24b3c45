import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, kubectl } from './support.ts';

// The pod network's promises: pods reach the API server and the cluster DNS, and nothing beyond the
// machine. "Beyond" is played by a network namespace this test creates (an interface of our own, as
// the network rule requires): a host outside the cluster, routed like any other destination.
const OUTSIDE_NS = 'outrigger-e2e-outside';
const OUTSIDE_HOST_SIDE = '10.246.0.1';
const OUTSIDE_ADDRESS = '10.246.0.2';
const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' });

describe('the pod network reaches the cluster and nothing beyond it', () => {
  let ns: string;
  let server: ChildProcess | undefined;
  const inPod = (script: string) => kubectl(['exec', '-n', ns, 'probe', '--', 'sh', '-c', script]);

  // `ip netns add` makes /run/netns a mount point when it creates it: undone in afterAll.
  const netnsDirExisted = existsSync('/run/netns');

  beforeAll(() => {
    ip('netns', 'add', OUTSIDE_NS);
    ip('link', 'add', 'ortest0', 'type', 'veth', 'peer', 'name', 'ortest1', 'netns', OUTSIDE_NS);
    ip('addr', 'add', `${OUTSIDE_HOST_SIDE}/24`, 'dev', 'ortest0');
    ip('link', 'set', 'ortest0', 'up');
    ip('-n', OUTSIDE_NS, 'addr', 'add', `${OUTSIDE_ADDRESS}/24`, 'dev', 'ortest1');
    ip('-n', OUTSIDE_NS, 'link', 'set', 'ortest1', 'up');
    ip('-n', OUTSIDE_NS, 'link', 'set', 'lo', 'up');
    server = spawn('ip', ['netns', 'exec', OUTSIDE_NS, 'python3', '-m', 'http.server', '8080', '--bind', OUTSIDE_ADDRESS], { stdio: 'ignore' });
    ns = createNamespace('net', false);
    kubectl(['run', 'probe', '-n', ns, '--image=localhost/busybox:local', '--image-pull-policy=Never', '--restart=Never', '--command', '--', 'sleep', '3600']);
    kubectl(['wait', '--for=condition=Ready', `pod/probe`, '-n', ns, '--timeout=120s']);
  });

  afterAll(() => {
    server?.kill('SIGKILL');
    execFileSync('ip', ['netns', 'delete', OUTSIDE_NS]);
    if (!netnsDirExisted) {
      execFileSync('umount', ['/run/netns']);
      rmdirSync('/run/netns');
    }
  });

  it('the outside host answers the host itself (the control for the tests below)', async () => {
    const deadline = Date.now() + 10_000;
    let answer = '';
    while (!answer && Date.now() < deadline) {
      answer = (await fetch(`http://${OUTSIDE_ADDRESS}:8080/`).then((r) => String(r.status)).catch(() => ''));
      if (!answer) await new Promise((r) => setTimeout(r, 300));
    }
    expect(answer).toBe('200');
  });

  it('a pod cannot reach it: the forwarded packets are dropped', () => {
    expect(() => inPod(`wget -q -T 3 -O- http://${OUTSIDE_ADDRESS}:8080/`)).toThrow(/timed out|download timed out|terminated|exit code|command terminated/i);
  });

  it('a pod reaches the API server through the kubernetes Service (its name resolved by the cluster DNS)', () => {
    // A TCP connection through kube-proxy's rules; the agents' exec proves the HTTPS path above it.
    expect(inPod('nc -w 3 kubernetes.default.svc 443 </dev/null && echo connected')).toContain('connected');
  });

  it('cluster DNS answers the cluster and nothing else', () => {
    expect(inPod('nslookup kubernetes.default.svc.cluster.local')).toContain('10.96.0.1');
    expect(() => inPod('nslookup example.com')).toThrow();
  });

  it("a pod cannot reach the host's other services (the kubelet's port on the same address)", () => {
    expect(() => inPod('nc -w 3 10.245.0.1 10250 </dev/null')).toThrow();
  });
});
