import { INSTANCE_LABEL } from '@outrigger/install';

/** Helm's annotations on every object of a release: it adopts, and deletes on uninstall, only objects carrying them. */
const HELM_RELEASE_NAME = 'meta.helm.sh/release-name';
const HELM_RELEASE_NAMESPACE = 'meta.helm.sh/release-namespace';

export interface HelmInstall {
  readonly by: 'helm';
  readonly release: string;
  readonly releaseNamespace: string;
}

/** Installed from manifests (an overlay, a base), naming the installation with the instance label or not. */
export interface ManifestInstall {
  readonly by: 'manifests';
  readonly instance: string | undefined;
}

/** Which installation Outrigger's objects belong to, as its Deployments carry it. */
export type InstallIdentity = HelmInstall | ManifestInstall;

interface ObjectMetadata {
  readonly metadata?: { readonly name?: string; readonly labels?: Readonly<Record<string, string>>; readonly annotations?: Readonly<Record<string, string>> };
}

/**
 * The identity every Outrigger Deployment of the install namespace carries; throws naming them when
 * there is none or they differ, as nothing else tells which installation an object belongs to.
 */
export function installIdentity(deployments: readonly ObjectMetadata[], namespace: string): InstallIdentity {
  const each = deployments.map((d) => ({ name: d.metadata?.name, identity: identityOf(d) }));
  const [first, ...rest] = each;
  if (!first) throw new Error(`no Outrigger Deployment in namespace ${namespace} tells which installation this is: pass --namespace, or install Outrigger first`);
  if (rest.some((e) => describeInstall(e.identity) !== describeInstall(first.identity))) {
    throw new Error(`the Outrigger Deployments in namespace ${namespace} belong to different installations: ${each.map((e) => `${e.name}: ${describeInstall(e.identity)}`).join('; ')}`);
  }
  return first.identity;
}

function identityOf({ metadata }: ObjectMetadata): InstallIdentity {
  const release = metadata?.annotations?.[HELM_RELEASE_NAME];
  if (release === undefined) return { by: 'manifests', instance: metadata?.labels?.[INSTANCE_LABEL] };
  const releaseNamespace = metadata?.annotations?.[HELM_RELEASE_NAMESPACE];
  if (releaseNamespace === undefined) throw new Error(`Deployment ${metadata?.name} carries Helm's ${HELM_RELEASE_NAME} annotation without its ${HELM_RELEASE_NAMESPACE}`);
  return { by: 'helm', release, releaseNamespace };
}

export function describeInstall(identity: InstallIdentity): string {
  if (identity.by === 'helm') return `Helm release ${identity.release} in namespace ${identity.releaseNamespace}`;
  return identity.instance === undefined ? `no ${INSTANCE_LABEL} label` : `${INSTANCE_LABEL}=${identity.instance}`;
}

/** What puts back what a Helm release lacks: Helm, from the chart version and values installed. */
export function helmRepair({ release, releaseNamespace }: HelmInstall): string {
  return `helm upgrade ${release} <your chart> --version <its installed version> --namespace ${releaseNamespace} --reuse-values`;
}
