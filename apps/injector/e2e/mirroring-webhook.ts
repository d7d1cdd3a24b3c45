import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { AdmissionregistrationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { encodeCaBundle } from '@outrigger/admission';
import { issueCertificate } from '@outrigger/pki';

/** Pod annotation naming, comma-separated, the containers whose image the mirroring webhook moves to its registry. */
export const MIRROR_ANNOTATION = 'e2e.outrigger.dev/mirror';
export const MIRROR_REGISTRY = 'mirror.example';

interface PodReview {
  readonly request: { readonly uid: string; readonly object: { metadata?: { annotations?: Record<string, string> }; spec: { containers: { name: string; image: string }[] } } };
}

/** The registry-mirror rewrite an admin might run: what it does to the containers named by the pod's annotation. */
function mirrorOperations({ request }: PodReview): object[] {
  const named = new Set((request.object.metadata?.annotations?.[MIRROR_ANNOTATION] ?? '').split(',').filter(Boolean));
  return request.object.spec.containers.flatMap((c, i) =>
    named.has(c.name) ? [{ op: 'replace', path: `/spec/containers/${i}/image`, value: `${MIRROR_REGISTRY}/${c.image.slice(c.image.indexOf('/') + 1)}` }] : [],
  );
}

export interface MirroringWebhook {
  stop(): Promise<void>;
}

/**
 * A second mutating webhook, independent of our code (plain node:https), registered as `name` for
 * pod creates in `namespaces` with reinvocationPolicy Never: it changes images after the webhooks
 * whose configuration names sort before `name`, as a registry-mirror policy would.
 */
export async function startMirroringWebhook(kc: KubeConfig, name: string, namespaces: readonly string[]): Promise<MirroringWebhook> {
  const ca = issueCertificate({ commonName: 'mirror-ca', usage: 'ca', lifetimeMs: 86_400_000 });
  const leaf = issueCertificate({ commonName: '127.0.0.1', usage: 'server', issuer: ca, lifetimeMs: 86_400_000, ipAddresses: ['127.0.0.1'] });
  const server = createServer({ cert: leaf.cert, key: leaf.key }, (req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
      const review = JSON.parse(body) as PodReview;
      const operations = mirrorOperations(review);
      const patch = operations.length > 0 ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(operations)).toString('base64') } : {};
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true, ...patch } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const admissionApi = kc.makeApiClient(AdmissionregistrationV1Api);
  await admissionApi.createMutatingWebhookConfiguration({
    body: {
      metadata: { name },
      webhooks: [
        {
          name: 'mirror.e2e.outrigger.dev',
          admissionReviewVersions: ['v1'],
          clientConfig: { url: `https://127.0.0.1:${port}/mutate`, caBundle: encodeCaBundle(ca.cert) },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
          failurePolicy: 'Fail',
          sideEffects: 'None',
          reinvocationPolicy: 'Never',
          namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [...namespaces] }] },
        },
      ],
    },
  });
  return {
    stop: async () => {
      await admissionApi.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
