import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadKubeConfig } from './kube-config.js';

const kubeconfig = (server: string) => `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "${server}" } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;

describe('loadKubeConfig', () => {
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
    vi.stubEnv('KUBECONFIG', join(dir, 'b'));
    expect(loadKubeConfig(join(dir, 'a')).getCurrentCluster()?.server).toBe('https://a.example:6443');
    expect(loadKubeConfig().getCurrentCluster()?.server).toBe('https://b.example:6443');
  });

  it('names the missing file and where its name came from', () => {
    vi.stubEnv('KUBECONFIG', join(dir, 'nope'));
    expect(() => loadKubeConfig()).toThrow(/nope \(from KUBECONFIG\) does not exist/);
  });

  it('falls back to the in-cluster ServiceAccount', () => {
    const sa = join(dir, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'tok');
    writeFileSync(join(sa, 'ca.crt'), '');
    writeFileSync(join(sa, 'namespace'), 'outrigger');
    vi.stubEnv('KUBERNETES_SERVICE_HOST', '10.0.0.1');
    vi.stubEnv('KUBERNETES_SERVICE_PORT', '443');
    expect(loadKubeConfig(undefined, { inClusterRoot: dir }).getCurrentCluster()?.server).toBe('https://10.0.0.1:443');
  });

  it('explains what it looked for when nothing is there', () => {
    expect(() => loadKubeConfig(undefined, { inClusterRoot: dir })).toThrow(/pass a kubeconfig path, set KUBECONFIG, or run in a pod/);
  });
});
