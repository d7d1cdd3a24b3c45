import { request } from 'node:https';

/** Reviews the injector at `baseUrl` has answered, all outcomes together, from its own /metrics. */
export function reviewsAnswered(baseUrl: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(new URL('/metrics', baseUrl), { ca, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
        const counts = [...body.matchAll(/^outrigger_injector_admission_requests_total\{[^}]*\} (\d+)$/gm)];
        if (res.statusCode !== 200 || counts.length === 0) reject(new Error(`GET ${baseUrl}/metrics: ${res.statusCode}, ${counts.length} admission_requests_total series`));
        else resolve(counts.reduce((sum, m) => sum + Number(m[1]), 0));
      });
    });
    req.on('error', reject).on('timeout', () => req.destroy(new Error(`GET ${baseUrl}/metrics timed out`)));
    req.end();
  });
}
