/**
 * A stand-in for xxl-job-admin's side of the executor protocol, as far as the demo and the
 * real-cluster suite need it: busybox httpd runs one CGI script for every call under
 * /cgi-bin/admin, which logs each /api/registry, /api/registryRemove and /api/callback call (with
 * its body) on stderr, the pod's log, and answers success, or refuses a call without the access
 * token of the Secret xxl-job-access-token in its namespace.
 */
const SCRIPT = `#!/bin/sh
body=$(head -c "\${CONTENT_LENGTH:-0}")
if [ -n "$ACCESS_TOKEN" ] && [ "$HTTP_XXL_JOB_ACCESS_TOKEN" = "$ACCESS_TOKEN" ]; then verdict=accepted answer='{"code":200}'
else verdict=refused answer='{"code":500,"msg":"The access token is wrong."}'; fi
echo "admin $verdict POST $PATH_INFO $body" >&2
printf 'Content-Type: application/json\\r\\n\\r\\n%s' "$answer"
`;

const NAME = 'xxl-job-admin';

/** The admin address an opted-in pod names in its job-addr annotation. */
export function adminStandInAddress(namespace: string): string {
  return `http://${NAME}.${namespace}:8080/cgi-bin/admin`;
}

/** The ConfigMap, Deployment and Service of the stand-in in `namespace` (which holds the Secret xxl-job-access-token). */
export function adminStandInObjects(namespace: string): object[] {
  return [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: NAME, namespace }, data: { admin: SCRIPT } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: NAME, namespace },
      spec: {
        selector: { matchLabels: { app: NAME } },
        template: {
          metadata: { labels: { app: NAME } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: 'admin',
                image: 'localhost/busybox:local',
                imagePullPolicy: 'Never',
                command: ['sh', '-c', 'mkdir -p /tmp/www/cgi-bin && cp /admin/admin /tmp/www/cgi-bin/ && chmod 755 /tmp/www/cgi-bin/admin && exec httpd -f -p 8080 -h /tmp/www'],
                env: [{ name: 'ACCESS_TOKEN', valueFrom: { secretKeyRef: { name: 'xxl-job-access-token', key: 'token' } } }],
                ports: [{ containerPort: 8080 }],
                readinessProbe: { tcpSocket: { port: 8080 } },
                volumeMounts: [{ name: 'script', mountPath: '/admin' }],
              },
            ],
            volumes: [{ name: 'script', configMap: { name: NAME } }],
          },
        },
      },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: NAME, namespace }, spec: { selector: { app: NAME }, ports: [{ port: 8080 }] } },
  ];
}

/** The lines of the stand-in's log (`kubectl logs` output) about calls to `path` ('/api/registry' and so on). */
export function adminStandInCalls(log: string, path: string): string[] {
  return log.split('\n').filter((line) => line.includes(` POST ${path} `));
}

/** One result the agent reported (/api/callback), as the stand-in logged it. */
export interface AdminStandInCallback {
  readonly accepted: boolean;
  readonly logId: number;
  readonly handleCode: number;
  readonly handleMsg: string;
}

/** Every result in the callbacks of the stand-in's log, one entry per result and call (a result sent twice appears twice). */
export function adminStandInCallbacks(log: string): AdminStandInCallback[] {
  return adminStandInCalls(log, '/api/callback').flatMap((line) => {
    const accepted = line.startsWith('admin accepted ');
    const body = line.slice(line.indexOf(' POST /api/callback ') + ' POST /api/callback '.length);
    const results = JSON.parse(body) as { logId: number; handleCode: number; handleMsg?: string }[];
    return results.map((r) => ({ accepted, logId: r.logId, handleCode: r.handleCode, handleMsg: r.handleMsg ?? '' }));
  });
}
