import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { createTestNamespace, kubeConfigFrom } from '@outrigger/control-plane';
import { parse, stringify } from 'yaml';
import { describe, expect, inject, it } from 'vitest';
import { ClientNodeKubeClient, HttpsKubeClient, classifyApiError, kubeJson, loadKubeClient, streamWatch, type KubeClient, type KubeObject, type WatchEvent } from '../src/index.js';

interface Kubeconfig {
  users: { name: string; user: Record<string, unknown> }[];
}

describe('KubeClient against the apiserver', () => {
  const cp = inject('controlPlane');
  const kc = kubeConfigFrom(cp.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);

  /** The admin kubeconfig with its client certificate handed out by an exec credential plugin instead. */
  function execKubeconfig(): string {
    const dir = mkdtempSync(join(tmpdir(), 'exec-plugin-'));
    const config = parse(readFileSync(cp.kubeconfigPath, 'utf8')) as Kubeconfig;
    const user = config.users[0].user;
    const pem = (field: string) => Buffer.from(String(user[field]), 'base64').toString('utf8');
    const credential = {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { clientCertificateData: pem('client-certificate-data'), clientKeyData: pem('client-key-data') },
    };
    writeFileSync(join(dir, 'credential.json'), JSON.stringify(credential));
    const plugin = join(dir, 'plugin.sh');
    writeFileSync(plugin, `#!/bin/sh\ncat ${join(dir, 'credential.json')}\n`);
    chmodSync(plugin, 0o755);
    config.users[0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } };
    const path = join(dir, 'kubeconfig');
    writeFileSync(path, stringify(config));
    return path;
  }

  const clients: Array<[string, () => KubeClient]> = [
    ['HttpsKubeClient (client certificate)', () => loadKubeClient(cp.kubeconfigPath)],
    ['ClientNodeKubeClient (exec credential plugin)', () => loadKubeClient(execKubeconfig())],
    ['ClientNodeKubeClient (wrapping a client-node KubeConfig)', () => ClientNodeKubeClient.from(kc)],
  ];

  it('loads the plain kubeconfig without client-node and the exec one with it', () => {
    expect(loadKubeClient(cp.kubeconfigPath)).toBeInstanceOf(HttpsKubeClient);
    expect(loadKubeClient(execKubeconfig())).toBeInstanceOf(ClientNodeKubeClient);
  });

  it.each(clients)('%s: reads, writes, reports errors and streams a watch', async (_name, make) => {
    const client = make();
    const namespace = await createTestNamespace(kc, 'kube-client');
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const created = await kubeJson<KubeObject>(client, { method: 'POST', path, body: { metadata: { name: 'a' }, data: { k: 'v' } } });
    expect((await core.readNamespacedConfigMap({ namespace, name: 'a' })).metadata?.uid).toBe(created.metadata?.uid);

    const missing = await kubeJson(client, { path: `${path}/nope` }).catch((e: unknown) => e);
    expect(classifyApiError(missing)).toMatchObject({ kind: 'notFound', message: expect.stringContaining('"nope" not found') });

    const events: WatchEvent[] = [];
    const stop = new AbortController();
    const watching = streamWatch(client, path, { resourceVersion: created.metadata?.resourceVersion }, stop.signal, (event) => {
      events.push(event);
      if (event.type === 'DELETED') stop.abort();
    }).catch((e: unknown) => e);
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'b' } } });
    await core.deleteNamespacedConfigMap({ namespace, name: 'b' });
    expect(classifyApiError(await watching).kind).toBe('aborted');
    expect(events.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual(['ADDED b', 'DELETED b']);
  });
});
