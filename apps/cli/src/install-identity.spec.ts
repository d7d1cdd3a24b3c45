import { describe, expect, it } from 'vitest';
import { describeInstall, helmRepair, installIdentity } from './install-identity.js';

const deployment = (name: string, labels: Record<string, string>, annotations?: Record<string, string>) => ({ metadata: { name, labels, ...(annotations ? { annotations } : {}) } });
const PART_OF = { 'app.kubernetes.io/part-of': 'outrigger' };
const HELM = { 'meta.helm.sh/release-name': 'platform', 'meta.helm.sh/release-namespace': 'default' };

describe('installIdentity', () => {
  it("reads an overlay's instance label, a base's lack of one, and a Helm release from the Deployments", () => {
    expect(installIdentity([deployment('a', { ...PART_OF, 'app.kubernetes.io/instance': 'outrigger-dev' }), deployment('b', { ...PART_OF, 'app.kubernetes.io/instance': 'outrigger-dev' })], 'ns')).toEqual({ by: 'manifests', instance: 'outrigger-dev' });
    expect(installIdentity([deployment('a', PART_OF)], 'ns')).toEqual({ by: 'manifests', instance: undefined });
    const helm = installIdentity([deployment('a', { ...PART_OF, 'app.kubernetes.io/instance': 'platform', 'app.kubernetes.io/managed-by': 'Helm' }, HELM)], 'ns');
    expect(helm).toEqual({ by: 'helm', release: 'platform', releaseNamespace: 'default' });
    expect(describeInstall(helm)).toBe('Helm release platform in namespace default');
  });

  it('refuses to guess: no Deployment, Deployments that differ, half of Helm ownership', () => {
    expect(() => installIdentity([], 'ns')).toThrow('no Outrigger Deployment in namespace ns tells which installation this is');
    expect(() => installIdentity([deployment('a', PART_OF), deployment('b', { ...PART_OF, 'app.kubernetes.io/instance': 'x' })], 'ns')).toThrow(
      'the Outrigger Deployments in namespace ns belong to different installations: a: no app.kubernetes.io/instance label; b: app.kubernetes.io/instance=x',
    );
    expect(() => installIdentity([deployment('a', PART_OF, { 'meta.helm.sh/release-name': 'platform' })], 'ns')).toThrow("Deployment a carries Helm's meta.helm.sh/release-name annotation without its meta.helm.sh/release-namespace");
  });

  it("repairs a Helm install with Helm, in the release's namespace, with the values installed", () => {
    expect(helmRepair({ by: 'helm', release: 'platform', releaseNamespace: 'default' })).toBe('helm upgrade platform <your chart> --version <its installed version> --namespace default --reuse-values');
  });
});
