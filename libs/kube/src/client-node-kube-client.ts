import type { KubeConfig } from '@kubernetes/client-node';
import { requestSignal, requestUrl, type KubeClient, type KubeRequest, type KubeResponse } from './kube-request.js';

/**
 * A KubeClient on client-node's HTTP stack and authenticators, for kubeconfigs HttpsKubeClient
 * does not handle (exec credential plugins, auth providers, proxies) and for tests holding a
 * client-node KubeConfig. client-node is imported on first use, so services that never need it
 * never pay its memory.
 */
export class ClientNodeKubeClient implements KubeClient {
  private loaded: Promise<{ kc: KubeConfig; runtime: typeof import('@kubernetes/client-node') }> | undefined;

  constructor(
    readonly server: string,
    private readonly load: () => KubeConfig | Promise<KubeConfig>,
  ) {}

  /** Wraps an already loaded client-node KubeConfig (its current cluster and user). */
  static from(kc: KubeConfig): ClientNodeKubeClient {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    return new ClientNodeKubeClient(cluster.server, () => kc);
  }

  /** A kubeconfig file, read by client-node on the first request. */
  static fromFile(server: string, path: string): ClientNodeKubeClient {
    return new ClientNodeKubeClient(server, async () => {
      const { KubeConfig } = await import('@kubernetes/client-node');
      const kc = new KubeConfig();
      kc.loadFromFile(path);
      return kc;
    });
  }

  async request(request: KubeRequest): Promise<KubeResponse> {
    if (!this.loaded) {
      this.loaded = Promise.all([this.load(), import('@kubernetes/client-node')]).then(([kc, runtime]) => ({ kc, runtime }));
      this.loaded.catch(() => (this.loaded = undefined)); // try again on the next request
    }
    const { kc, runtime } = await this.loaded;
    const ctx = new runtime.RequestContext(requestUrl(this.server, request).toString(), request.method ?? 'GET');
    ctx.setHeaderParam('Accept', request.accept ?? 'application/json');
    if (request.body !== undefined) {
      ctx.setHeaderParam('Content-Type', request.contentType ?? 'application/json');
      ctx.setBody(typeof request.body === 'string' ? request.body : JSON.stringify(request.body));
    }
    const signal = requestSignal(request);
    if (signal) ctx.setSignal(signal);
    await kc.applySecurityAuthentication(ctx);
    const response = await new runtime.IsomorphicFetchHttpLibrary().send(ctx).toPromise();
    return {
      status: response.httpStatusCode,
      headers: response.headers,
      body: {
        text: () => response.body.text(),
        stream: () => {
          const stream = response.body.stream();
          if (!stream) throw new Error(`${request.path}: response has no body`);
          return stream;
        },
      },
    };
  }
}
