import { jsonPointer } from '@outrigger/admission';
import type { OwnedPaths } from '@outrigger/admission';
import type { AgentProfile } from '@outrigger/agent-profiles';
import { statusAnnotation } from './injection-status.js';
import { SERVICE_ACCOUNT_VOLUME_PREFIX } from './service-account-token.js';

/**
 * Everything the sidecar extension may touch: its status annotations (and the annotations map if
 * missing), appends to the container lists, and creating initContainers for native sidecars; for
 * the agent's token (agent-token.ts), the pod's automountServiceAccountToken, appending to (or
 * creating) the volumes, and removing the ServiceAccount plugin's token volume and its mounts;
 * for the profile's pod parts, appending to (or creating) the volumes and imagePullSecrets.
 */
export function sidecarOwnedPaths(profiles: readonly AgentProfile[]): OwnedPaths {
  const volumes = jsonPointer(['spec', 'volumes']);
  const pullSecrets = jsonPointer(['spec', 'imagePullSecrets']);
  return {
    members: [...profiles.map((profile) => jsonPointer(['metadata', 'annotations', statusAnnotation(profile)])), jsonPointer(['spec', 'automountServiceAccountToken'])],
    appendable: [jsonPointer(['spec', 'containers']), jsonPointer(['spec', 'initContainers']), volumes, pullSecrets],
    creatable: [jsonPointer(['metadata']), jsonPointer(['metadata', 'annotations']), jsonPointer(['spec', 'initContainers']), volumes, pullSecrets],
    removable: [
      { list: volumes, namePrefix: SERVICE_ACCOUNT_VOLUME_PREFIX },
      { list: '/spec/containers/*/volumeMounts', namePrefix: SERVICE_ACCOUNT_VOLUME_PREFIX },
      { list: '/spec/initContainers/*/volumeMounts', namePrefix: SERVICE_ACCOUNT_VOLUME_PREFIX },
    ],
  };
}
