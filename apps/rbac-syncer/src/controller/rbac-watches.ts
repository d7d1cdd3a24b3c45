import { NAMESPACE_LABEL, type PolicyRule, type RbacBindingKind, REVOKED_ANNOTATION, REVOKED_UNTIL_ANNOTATION } from '@outrigger/agent-profiles';
import { objectKey, resourcePath, type KubeObject, type WatchOptions } from '@outrigger/kube';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, PROFILE_LABEL, RBAC_API_VERSION } from '../desired/rbac-objects.js';
import { normalizeRevoked, normalizeSubjects, type RevokedSubject, type RevokedSubjects, sameSubjects, type SaSubject } from '../desired/subjects.js';
import type { ObservedBinding, ObservedRole } from '../plan/observed-profile.js';
import type { SyncKey } from './sync-key.js';

/** One of our bindings as its watch keeps it: which profile it serves, and what the planner sees. */
export interface OwnBinding {
  /** Its key in the store. */
  readonly key: string;
  readonly profile: string;
  readonly binding: ObservedBinding;
}

/** The binding store's index group of the profiles our bindings serve: asked per namespace event, so never a walk of every binding. */
export const BINDING_OWNERS = '(profiles)';

/** The binding store's index group of one profile's bindings in a namespace (undefined: those of earlier versions); never read back. */
export function bindingGroup(profile: string, namespace: string | undefined): string {
  return JSON.stringify([profile, namespace ?? null]);
}

type StoredSubject = { kind?: string; name?: string; namespace?: string };

/** Our own bindings of a kind (by label), filed by the profile and namespace their labels name. */
export function ownBindingsWatch(resource: 'clusterrolebindings' | 'rolebindings'): Omit<WatchOptions<OwnBinding, SyncKey>, 'mapper'> {
  const kind = resource === 'clusterrolebindings' ? 'ClusterRoleBinding' : 'RoleBinding';
  return {
    path: resourcePath({ apiVersion: RBAC_API_VERSION, resource }),
    labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
    project: (obj: KubeObject) => {
      const stored = obj as KubeObject & { subjects?: StoredSubject[]; roleRef?: { name?: string } };
      const raw = stored.subjects ?? [];
      const subjects = normalizeSubjects(raw.flatMap((s): SaSubject[] => (s.kind === 'ServiceAccount' && s.name && s.namespace ? [{ kind: 'ServiceAccount', name: s.name, namespace: s.namespace }] : [])));
      const asStored = raw.map((s): SaSubject => ({ kind: 'ServiceAccount', name: s.name ?? '', namespace: s.namespace ?? '' }));
      const labels = obj.metadata?.labels ?? {};
      const revoked = revokedSubjects(obj.metadata?.annotations ?? {});
      return {
        key: objectKey(obj),
        profile: labels[PROFILE_LABEL] ?? '',
        binding: {
          kind,
          name: obj.metadata?.name ?? '',
          namespace: kind === 'RoleBinding' ? obj.metadata?.namespace : labels[NAMESPACE_LABEL],
          roleRef: stored.roleRef?.name ?? '',
          resourceVersion: obj.metadata?.resourceVersion ?? '',
          subjects,
          untidy: raw.some((s) => s.kind !== 'ServiceAccount') || !sameSubjects(subjects, asStored),
          ...(revoked ? { revoked } : {}),
        },
      };
    },
    equals: (a, b) => JSON.stringify(a) === JSON.stringify(b),
    index: (view) => [
      [bindingGroup(view.profile, view.binding.namespace), view.key],
      [BINDING_OWNERS, view.profile],
    ],
    resyncOnList: false,
  };
}

/**
 * The revoked subjects a binding's annotations list, if any: names as `<namespace>/<name>` and their
 * dates (epoch ms) in the same order, space-separated; one date for all is what earlier versions
 * wrote. Dates that do not parse count as run out, so the next plan clears the list.
 */
function revokedSubjects(annotations: Record<string, string>): RevokedSubjects | undefined {
  const names = (annotations[REVOKED_ANNOTATION] ?? '').split(' ');
  const dates = (annotations[REVOKED_UNTIL_ANNOTATION] ?? '').split(' ').map((d) => (/^\d+$/.test(d) ? Number(d) : Number.NaN));
  const dated = dates.every(Number.isFinite) && (dates.length === 1 || dates.length === names.length);
  const entries = names.flatMap((entry, i): RevokedSubject[] => {
    const slash = entry.indexOf('/');
    const untilMs = dated ? (dates[dates.length === 1 ? 0 : i] as number) : 0;
    return slash > 0 && slash < entry.length - 1 ? [{ kind: 'ServiceAccount', namespace: entry.slice(0, slash), name: entry.slice(slash + 1), untilMs }] : [];
  });
  return entries.length > 0 ? normalizeRevoked(entries) : undefined;
}

/** Every ClusterRole, ours or not, as the planner needs it: whose it is, and (only if ours) its rules. */
export function clusterRolesWatch(): Omit<WatchOptions<ObservedRole, SyncKey>, 'mapper'> {
  return {
    path: resourcePath({ apiVersion: RBAC_API_VERSION, resource: 'clusterroles' }),
    project: (obj) => {
      const labels = obj.metadata?.labels;
      const ours = labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE;
      return { name: obj.metadata?.name ?? '', ownedBy: ours ? (labels?.[PROFILE_LABEL] ?? '') : undefined, rules: ours ? ((obj as { rules?: PolicyRule[] }).rules ?? []) : [] };
    },
    equals: (a, b) => a.ownedBy === b.ownedBy && JSON.stringify(a.rules) === JSON.stringify(b.rules),
    resyncOnList: false,
  };
}

export const GUARD_POLICIES = 'validatingadmissionpolicies';
export const GUARD_BINDINGS = 'validatingadmissionpolicybindings';

/** A guard's watch of `resource`: the ClusterRoleBindings' guard by the resource's name, the other by that and its kind. */
export const guardWatchName = (kind: RbacBindingKind, resource: string): string => (kind === 'ClusterRoleBinding' ? resource : `${resource}/${kind}`);
