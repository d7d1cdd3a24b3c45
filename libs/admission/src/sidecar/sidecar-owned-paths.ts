import { jsonPointer } from '../json-pointer.js';
import type { OwnedPaths } from '../owned-paths.js';
import type { AgentProfile } from '../profiles/profile-schema.js';
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
