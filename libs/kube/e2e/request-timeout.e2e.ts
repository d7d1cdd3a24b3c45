import { CoreV1Api } from '@kubernetes/client-node';
import { kubeConfigFrom } from '@outrigger/control-plane';
import { describe, expect, inject, it } from 'vitest';
import { classifyApiError, withRequestTimeout } from '../src/index.js';
import { TcpProxy } from './tcp-proxy.js';

describe('withRequestTimeout', () => {
  const cp = inject('controlPlane');
  const kc = kubeConfigFrom(cp.kubeconfigPath);

  it('aborts a typed API call that gets no answer, as a retryable error', async () => {
    const url = new URL(cp.server);
    const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port) });
    try {
      const core = kc.makeApiClient(CoreV1Api);
      const viaProxy = proxy.kubeConfig(kc).makeApiClient(CoreV1Api);
      expect((await viaProxy.readNamespace({ name: 'default' }, withRequestTimeout(5_000))).metadata?.name).toBe('default');
      proxy.freeze();
      const error = await viaProxy.readNamespace({ name: 'default' }, withRequestTimeout(500)).catch((e: unknown) => e);
      expect(classifyApiError(error)).toMatchObject({ kind: 'aborted', retryable: true });
      // Other clients are unaffected, and the options still carry other middleware.
      expect((await core.readNamespace({ name: 'default' }, withRequestTimeout(5_000))).metadata?.name).toBe('default');
    } finally {
      await proxy.stop();
    }
  });
});
