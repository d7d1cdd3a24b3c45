import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { requestSignal, requestUrl, type KubeClient, type KubeRequest, type KubeResponse } from './kube-request.js';

/** Where the API server is and who we are to it: what a kubeconfig context or a pod's ServiceAccount says. */
export interface KubeConnection {
  readonly server: string;
  /** PEM; the system roots when absent. */
  readonly ca?: string;
  readonly insecureSkipTlsVerify?: boolean;
  /** The name to check the serving certificate against, when it is not the server's host. */
  readonly tlsServerName?: string;
  /** Client certificate and key, PEM. */
  readonly cert?: string;
  readonly key?: string;
  readonly token?: string;
  /** Re-read every minute: projected ServiceAccount tokens are rotated by the kubelet. */
  readonly tokenFile?: string;
  readonly username?: string;
  readonly password?: string;
  readonly impersonate?: { readonly user?: string; readonly uid?: string; readonly groups?: readonly string[] };
}

const TOKEN_FILE_TTL_MS = 60_000;

/**
 * A KubeClient on Node's own http(s) with a keep-alive agent. It exists for memory: loading
 * client-node's KubeConfig pulls in every generated API and model (~80 MiB RSS), more than the
 * rest of a service together.
 */
export class HttpsKubeClient implements KubeClient {
  readonly server: string;
  private readonly agent: HttpsAgent | HttpAgent;
  private token: { value: string; readAtMs: number } | undefined;

  constructor(private readonly connection: KubeConnection) {
    this.server = connection.server.replace(/\/+$/, '');
    const url = new URL(this.server);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`API server URL ${connection.server} is not http(s)`);
    this.agent =
      url.protocol === 'https:'
        ? new HttpsAgent({
            keepAlive: true,
            ca: connection.ca,
            cert: connection.cert,
            key: connection.key,
            rejectUnauthorized: !connection.insecureSkipTlsVerify,
            servername: connection.tlsServerName,
          })
        : new HttpAgent({ keepAlive: true });
  }

  request(request: KubeRequest): Promise<KubeResponse> {
    const url = requestUrl(this.server, request);
    const body = request.body === undefined ? undefined : typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    const headers: Record<string, string | string[]> = { Accept: request.accept ?? 'application/json', ...this.authHeaders() };
    if (body !== undefined) {
      headers['Content-Type'] = request.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const signal = requestSignal(request);
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      const req = send(url, { method: request.method ?? 'GET', headers, agent: this.agent }, (res) => {
        response = res;
        resolve({ status: res.statusCode ?? 0, headers: flatHeaders(res), body: responseBody(res) });
      });
      let response: IncomingMessage | undefined;
      // Our own abort handling rather than http's `signal` option, which ends a body already being
      // read with a plain ECONNRESET "aborted" that would look like network trouble.
      const onAbort = () => {
        const reason = abortReason(signal as AbortSignal);
        req.destroy(reason);
        response?.destroy(reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const forget = () => signal?.removeEventListener('abort', onAbort);
      req.once('close', () => (response && !response.closed ? response.once('close', forget) : forget()));
      req.on('error', reject);
      req.end(body);
    });
  }

  private authHeaders(): Record<string, string | string[]> {
    const { username, password, impersonate } = this.connection;
    const headers: Record<string, string | string[]> = {};
    const token = this.bearerToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    else if (username !== undefined) headers.Authorization = `Basic ${Buffer.from(`${username}:${password ?? ''}`).toString('base64')}`;
    if (impersonate?.user) headers['Impersonate-User'] = impersonate.user;
    if (impersonate?.uid) headers['Impersonate-Uid'] = impersonate.uid;
    if (impersonate?.groups?.length) headers['Impersonate-Group'] = [...impersonate.groups];
    return headers;
  }

  private bearerToken(): string | undefined {
    const { token, tokenFile } = this.connection;
    if (!tokenFile) return token;
    const now = Date.now();
    if (!this.token || now - this.token.readAtMs >= TOKEN_FILE_TTL_MS) {
      try {
        this.token = { value: readFileSync(tokenFile, 'utf8').trim(), readAtMs: now };
      } catch (error) {
        // Keep using the last token while the kubelet swaps the file; fail only if there never was one.
        if (!this.token) throw new Error(`cannot read the token file ${tokenFile}: ${(error as Error).message}`);
      }
    }
    return this.token.value;
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
}

function flatHeaders(res: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function responseBody(res: IncomingMessage): KubeResponse['body'] {
  return {
    async text() {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    stream: () => Readable.toWeb(res) as ReadableStream<Uint8Array>,
  };
}
