import { execFileSync } from 'node:child_process';
import { stringify } from 'yaml';
import { render } from '@outrigger/control-plane';

/**
 * Deletes what `kubectl apply -k deploy/<path>` created, but its Namespace and CRDs (a bare API
 * server never finishes deleting a namespace), so the suites after this one on the same API
 * server meet no objects owned by another field manager.
 */
export function removeOverlay(kubectlBin: string, kubeconfigPath: string, path: string): void {
  const objects = render(kubectlBin, path).filter((o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition');
  execFileSync(kubectlBin, ['--kubeconfig', kubeconfigPath, 'delete', '--ignore-not-found', '-f', '-'], {
    input: objects.map((o) => stringify(o)).join('---\n'),
    stdio: ['pipe', 'ignore', 'pipe'],
  });
}
