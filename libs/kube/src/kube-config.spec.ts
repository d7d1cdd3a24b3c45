import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClientNodeKubeClient } from './client-node-kube-client.js';
import { HttpsKubeClient } from './https-kube-client.js';
import { clientFromKubeconfig, loadKubeClient } from './kube-config.js';

const kubeconfig = (server: string, user = '{ token: t }', cluster = '') => `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "${server}"${cluster} } }]
users: [{ name: u, user: ${user} }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;

describe('loadKubeClient', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kube-config-'));
    vi.stubEnv('KUBECONFIG', '');
    vi.stubEnv('KUBERNETES_SERVICE_HOST', '');
    vi.stubEnv('KUBERNETES_SERVICE_PORT', '');
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prefers the explicit path over KUBECONFIG', () => {
    writeFileSync(join(dir, 'a'), kubeconfig('https://a.example:6443'));
    writeFileSync(join(dir, 'b'), kubeconfig('https://b.example:6443'));
    vi.stubEnv('KUBECONFIG', `${join(dir, 'b')}:${join(dir, 'a')}`);
    expect(loadKubeClient(join(dir, 'a')).server).toBe('https://a.example:6443');
    expect(loadKubeClient().server).toBe('https://b.example:6443');
  });

  it('names the missing file and where its name came from', () => {
    vi.stubEnv('KUBECONFIG', join(dir, 'nope'));
    expect(() => loadKubeClient()).toThrow(/nope \(from KUBECONFIG\) does not exist/);
  });

  it('falls back to the in-cluster ServiceAccount, IPv6 service address included', () => {
    const sa = join(dir, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'tok');
    writeFileSync(join(sa, 'ca.crt'), '');
    vi.stubEnv('KUBERNETES_SERVICE_HOST', '10.0.0.1');
    vi.stubEnv('KUBERNETES_SERVICE_PORT', '443');
    expect(loadKubeClient(undefined, { inClusterRoot: dir }).server).toBe('https://10.0.0.1:443');
    vi.stubEnv('KUBERNETES_SERVICE_HOST', 'fd00::1');
    expect(loadKubeClient(undefined, { inClusterRoot: dir }).server).toBe('https://[fd00::1]:443');
  });

  it('explains what it looked for when nothing is there', () => {
    expect(() => loadKubeClient(undefined, { inClusterRoot: dir })).toThrow(/pass a kubeconfig path, set KUBECONFIG, or run in a pod/);
  });
});

describe('clientFromKubeconfig', () => {
  it('says what is wrong with a broken kubeconfig', () => {
    expect(() => clientFromKubeconfig('a: [', '/k')).toThrow(/kubeconfig \/k is not valid YAML/);
    expect(() => clientFromKubeconfig('clusters: []', '/k')).toThrow(/kubeconfig \/k has no current-context/);
    const noCluster = kubeconfig('https://a:1').replace('context: { cluster: c,', 'context: { cluster: other,');
    expect(() => clientFromKubeconfig(noCluster, '/k')).toThrow(/cluster "other" of the current context is not in clusters/);
    expect(() => clientFromKubeconfig(kubeconfig(''), '/k')).toThrow(/cluster "c" has no server/);
    expect(() => clientFromKubeconfig(kubeconfig('https://a:1', '{ client-certificate: missing.crt }'), '/etc/k')).toThrow(
      /cannot read client-certificate missing.crt/,
    );
    expect(() => clientFromKubeconfig(kubeconfig('ftp://a:1'), '/k')).toThrow(/ftp:\/\/a:1 is not http\(s\)/);
  });

  it('leaves exec plugins, auth providers and proxies to client-node', () => {
    expect(clientFromKubeconfig(kubeconfig('https://a:1', '{ exec: { command: aws } }'), '/k')).toBeInstanceOf(ClientNodeKubeClient);
    expect(clientFromKubeconfig(kubeconfig('https://a:1', '{ auth-provider: { name: oidc } }'), '/k')).toBeInstanceOf(ClientNodeKubeClient);
    expect(clientFromKubeconfig(kubeconfig('https://a:1', '{}', ', proxy-url: "http://p:3128"'), '/k')).toBeInstanceOf(ClientNodeKubeClient);
    expect(clientFromKubeconfig(kubeconfig('https://a:1'), '/k')).toBeInstanceOf(HttpsKubeClient);
  });
});
