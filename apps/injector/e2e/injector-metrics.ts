import { request } from 'node:https';

/** GET `path` of the injector at `baseUrl` (trusting `ca`): its status and body. */
export function getFromInjector(baseUrl: string, ca: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, baseUrl), { ca, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject).on('timeout', () => req.destroy(new Error(`GET ${baseUrl}${path} timed out`)));
    req.end();
  });
}

/** The samples of metric `name` in the injector's /metrics, by their label text (`{a="x"}`, or '' for none). */
export async function injectorSamples(baseUrl: string, ca: string, name: string): Promise<Map<string, number>> {
  const { status, body } = await getFromInjector(baseUrl, ca, '/metrics');
  if (status !== 200) throw new Error(`GET ${baseUrl}/metrics: ${status}`);
  return new Map([...body.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'gm'))].map((m) => [m[1] ?? '', Number(m[2])]));
}

/** Reviews the injector at `baseUrl` has answered, all outcomes together, from its own /metrics. */
export async function reviewsAnswered(baseUrl: string, ca: string): Promise<number> {
  const counts = await injectorSamples(baseUrl, ca, 'outrigger_injector_admission_requests_total');
  if (counts.size === 0) throw new Error(`GET ${baseUrl}/metrics: no admission_requests_total series`);
  return [...counts.values()].reduce((sum, n) => sum + n, 0);
}
