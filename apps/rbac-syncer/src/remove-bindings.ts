// The Helm chart's pre-delete hook (a Job running this image): `node remove-bindings.js`.
import { loadKubeClient } from '@outrigger/kube';
import { removeSyncedRbac } from './uninstall/synced-rbac-removal.js';

const namespace = process.env.POD_NAMESPACE;
try {
  if (!namespace) throw new Error('POD_NAMESPACE is not set (the install namespace, from the downward API)');
  await removeSyncedRbac(loadKubeClient(), { namespace, log: (line) => process.stdout.write(`${line}\n`) });
} catch (error) {
  process.stderr.write(`remove-bindings: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
