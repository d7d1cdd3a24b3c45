import { selectsLabels } from './label-selector.js';
import type { AgentProfile } from './profile-schema.js';

/**
 * Whether a profile applies in a namespace labelled for injection: always without a
 * namespaceSelector; with one, only where it picks the namespace's labels. `labels` undefined
 * (not known: the namespace is not watched, or PROFILES_FILE) applies a scoped profile nowhere.
 */
export function profileAppliesIn(profile: AgentProfile, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!profile.namespaceSelector) return true;
  return labels !== undefined && selectsLabels(profile.namespaceSelector, labels);
}
