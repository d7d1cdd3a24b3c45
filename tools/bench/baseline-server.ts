import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';
import { parseAdmissionReview, parseJsonBody, protectedNamespacesFor, reviewResponse, sidecarExtension, XXL_JOB_PROFILE } from '@outrigger/admission';

/**
 * The least a webhook can do per request: raw node:https, parse, the same sidecar extension as the
 * injector (built-in xxl-job profile), JSON.stringify. The injector's overhead is measured against it.
 */
export function startBaseline(port: number, cert: string, key: string): Promise<Server> {
  const version = (JSON.parse(readFileSync(new URL('../../apps/injector/package.json', import.meta.url), 'utf8')) as { version: string }).version;
  const extensions = [sidecarExtension({ profiles: [XXL_JOB_PROFILE], injectorVersion: version, protectedNamespaces: protectedNamespacesFor('outrigger-system') })];
  const server = createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const json = parseJsonBody(Buffer.concat(chunks));
      const review = json.ok ? parseAdmissionReview(json.value) : json;
      if (!review.ok) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: review.error }));
        return;
      }
      const body = JSON.stringify(reviewResponse(review.value, extensions).reply);
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  server.keepAliveTimeout = 72_000;
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

// Run as a worker thread: its own event loop, so the load generator does not slow it down.
if (parentPort && (workerData as { baseline?: boolean } | undefined)?.baseline) {
  const { port, cert, key } = workerData as { port: number; cert: string; key: string };
  const port0 = parentPort;
  await startBaseline(port, cert, key);
  port0.postMessage('listening');
}
