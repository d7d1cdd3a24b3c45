import { readFileSync } from 'node:fs';

/** Test-only: the admission libraries share one fixture tree, libs/admission/fixtures. */
const FIXTURES = new URL('../../../admission/fixtures/', import.meta.url);

export function loadTextFixture(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8');
}

/** The least securityContext that meets the restricted Pod Security level, for profiles written in tests. */
export const RESTRICTED_SECURITY_CONTEXT = { runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' as const } };
