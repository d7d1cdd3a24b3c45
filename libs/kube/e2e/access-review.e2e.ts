import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { kubeConfigFrom, kubeconfigYaml } from '@outrigger/control-plane';
import { issueCertificate } from '@outrigger/pki';
import { describe, expect, inject, it } from 'vitest';
import { clientFromKubeconfig, describePermission, loadKubeClient, missingPermissions, type KubeClient, type RequiredPermission } from '../src/index.js';
import { waitFor } from './wait-for.js';

// What an RBAC syncer would check at startup.
const required: RequiredPermission[] = [
  { verb: 'list', group: '', resource: 'pods' },
  { verb: 'watch', group: '', resource: 'pods' },
  { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' },
  { verb: 'create', group: '', resource: 'events', namespace: 'default' },
];

describe('missingPermissions', () => {
  const cp = inject('controlPlane');
  const admin = kubeConfigFrom(cp.kubeconfigPath);

  /** A client for `user`, authenticated by a certificate from the control plane's CA (no RBAC of its own). */
  function clientFor(user: string): KubeClient {
    const ca = { cert: readFileSync(join(cp.dir, 'ca.crt'), 'utf8'), key: readFileSync(join(cp.dir, 'ca.key'), 'utf8') };
    const cert = issueCertificate({ commonName: user, usage: 'client', issuer: ca, lifetimeMs: 3_600_000 });
    return clientFromKubeconfig(kubeconfigYaml(cp.server, ca.cert, cert, user), join(cp.dir, `${user}.kubeconfig`));
  }

  it('finds nothing missing for a cluster admin', async () => {
    expect(await missingPermissions(loadKubeClient(cp.kubeconfigPath), required)).toEqual([]);
  });

  it('lists everything a user without RBAC lacks, then only what is still not granted', async () => {
    const user = `outrigger-nobody-${Date.now()}`;
    const kc = clientFor(user);
    expect((await missingPermissions(kc, required)).map(describePermission)).toEqual([
      'list pods',
      'watch pods',
      'create clusterrolebindings.rbac.authorization.k8s.io',
      'create events in namespace default',
    ]);

    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: { metadata: { name: user }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] }] } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: user },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
    });
    // The RBAC authorizer serves from its own watch cache: wait for it to see the binding.
    const missing = await waitFor('the grant to take effect', async () => {
      const left = await missingPermissions(kc, required);
      return left.length === 2 ? left : undefined;
    });
    expect(missing.map(describePermission)).toEqual(['create clusterrolebindings.rbac.authorization.k8s.io', 'create events in namespace default']);
  });

  it("reviews a ServiceAccount's access as an admin asks for it, by what is bound to the account and to its groups", async () => {
    const name = `outrigger-sa-${Date.now()}`;
    const account = { namespace: 'default', name };
    const kc = loadKubeClient(cp.kubeconfigPath);
    expect((await missingPermissions(kc, required, account)).map(describePermission)).toEqual([
      'list pods',
      'watch pods',
      'create clusterrolebindings.rbac.authorization.k8s.io',
      'create events in namespace default',
    ]);
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: { metadata: { name }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] }] } });
    // Bound to the group of the account's namespace: the review must carry the groups its token would.
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:serviceaccounts:default' }],
      },
    });
    try {
      const missing = await waitFor('the grant to take effect', async () => {
        const left = await missingPermissions(kc, required, account);
        return left.length === 2 ? left : undefined;
      });
      expect(missing.map(describePermission)).toEqual(['create clusterrolebindings.rbac.authorization.k8s.io', 'create events in namespace default']);
    } finally {
      await rbac.deleteClusterRoleBinding({ name });
      await rbac.deleteClusterRole({ name });
    }
  });
});
