import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { fileURLToPath } from 'node:url';
import { parseAdmissionReview, parseJsonBody, protectedNamespacesFor, reviewResponse } from '@outrigger/admission';
import { referenceProfile } from '@outrigger/agent-profiles';
import { sidecarExtension } from '@outrigger/sidecar';

/**
 * The least a webhook can do per request: raw node:https, parse, the same sidecar extension as the
 * injector (built-in xxl-job profile), JSON.stringify. The injector's overhead is measured against it.
 */
export function startBaseline(port: number, cert: string, key: string): Promise<Server> {
  const version = (JSON.parse(readFileSync(new URL('../../apps/injector/package.json', import.meta.url), 'utf8')) as { version: string }).version;
  const extensions = [sidecarExtension({ profiles: [referenceProfile()], injectorVersion: version, protectedNamespaces: protectedNamespacesFor('outrigger-system') })];
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

// Run as its own process (the bench starts it like the injector: built code, own event loop):
//   node --import tsx tools/bench/baseline-server.ts <port> <cert file> <key file>
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [port, certFile, keyFile] = process.argv.slice(2) as [string, string, string];
  await startBaseline(Number(port), readFileSync(certFile, 'utf8'), readFileSync(keyFile, 'utf8'));
  // An orderly exit on the bench's stop, so that --cpu-prof writes its profile.
  process.once('SIGTERM', () => process.exit(0));
  console.log('listening');
}
