import { jsonPointer } from '@outrigger/admission';
import type { OwnedPaths } from '@outrigger/admission';
import type { AgentProfile } from '@outrigger/agent-profiles';
import { statusAnnotation } from './injection-status.js';

/**
 * Everything the sidecar extension may touch: its status annotations (and the annotations map if
 * missing), appends to the container lists, and creating initContainers for native sidecars.
 */
export function sidecarOwnedPaths(profiles: readonly AgentProfile[]): OwnedPaths {
  return {
    members: profiles.map((profile) => jsonPointer(['metadata', 'annotations', statusAnnotation(profile)])),
    appendable: [jsonPointer(['spec', 'containers']), jsonPointer(['spec', 'initContainers'])],
    creatable: [jsonPointer(['metadata']), jsonPointer(['metadata', 'annotations']), jsonPointer(['spec', 'initContainers'])],
  };
}
