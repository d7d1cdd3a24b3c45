import { createServer, connect, type Server, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { clientFromKubeconfig, type KubeClient } from '../src/index.js';

interface KubeconfigFile {
  'current-context': string;
  contexts: { name: string; context: { cluster: string } }[];
  clusters: { name: string; cluster: { server: string } }[];
}

/**
 * A loopback TCP proxy in front of the apiserver (TLS passes through untouched; the serving
 * certificate is for 127.0.0.1 whatever the port). Lets a test cut one client off while the
 * apiserver stays up for everybody else, or freeze its connections the way a half-open TCP
 * connection behaves.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  /** Connections that pass no bytes any more, for good (a TLS stream with a gap could never resume). */
  private readonly frozen = new WeakSet<Socket>();
  private mode: 'open' | 'refuse' | 'freeze' = 'open';

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const holder: { proxy?: TcpProxy } = {};
    const server = createServer((client) => (holder.proxy ? holder.proxy.accept(client, target) : client.destroy()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('proxy has no port');
    holder.proxy = new TcpProxy(server, address.port);
    return holder.proxy;
  }

  /** A client for the kubeconfig at `path` whose current cluster is reached through this proxy. */
  kubeClient(path: string): KubeClient {
    const config = parse(readFileSync(path, 'utf8')) as KubeconfigFile;
    const context = config.contexts.find((c) => c.name === config['current-context'])?.context;
    const cluster = config.clusters.find((c) => c.name === context?.cluster)?.cluster;
    if (!cluster) throw new Error(`${path} has no current cluster`);
    const url = new URL(cluster.server);
    url.port = String(this.port);
    cluster.server = url.toString().replace(/\/$/, '');
    return clientFromKubeconfig(stringify(config), path);
  }

  /** Drops every connection and refuses new ones (resets them at once). */
  cutOff(): void {
    this.mode = 'refuse';
    this.sockets.forEach((s) => s.destroy());
  }

  /** Keeps connections open but passes no more bytes, like a peer that vanished without a FIN. */
  freeze(): void {
    this.mode = 'freeze';
    this.sockets.forEach((s) => this.frozen.add(s));
  }

  /** Back to normal for new connections (frozen ones stay frozen until closed). */
  restore(): void {
    this.mode = 'open';
  }

  async stop(): Promise<void> {
    this.sockets.forEach((s) => s.destroy());
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    if (this.mode === 'refuse') return void client.destroy();
    const upstream = connect(target.port, target.host);
    if (this.mode === 'freeze') [client, upstream].forEach((s) => this.frozen.add(s));
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(from);
      from.on('data', (chunk) => {
        if (!this.frozen.has(from)) to.write(chunk);
      });
      from.on('close', () => {
        this.sockets.delete(from);
        to.destroy();
      });
      from.on('error', () => to.destroy());
    }
  }
}
