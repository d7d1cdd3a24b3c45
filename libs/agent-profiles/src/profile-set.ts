import type { AgentProfileEntry } from './agent-profile-object.js';
import { profileConflicts } from './agent-profile-object.js';
import type { AgentProfile } from './profile-schema.js';

/** A profile a service uses, and the generation of the AgentProfile it came from. */
export interface ProfileInForce {
  readonly profile: AgentProfile;
  readonly generation: number;
}

/** Whether the latest generation of an AgentProfile took, and if not, why and what stays in force. */
export interface ProfileVerdict {
  readonly name: string;
  readonly generation: number;
  readonly accepted: boolean;
  readonly reason: 'Valid' | 'Invalid' | 'Conflict';
  readonly message: string;
  /** The generation in force for this name, if any (the last good one when the latest is refused). */
  readonly inForceGeneration?: number;
}

export interface ProfileSet {
  readonly inForce: readonly ProfileInForce[];
  readonly verdicts: readonly ProfileVerdict[];
}

/**
 * The profiles in force, given every AgentProfile's latest verdict and what was in force before:
 * a valid generation replaces the old one; an invalid one keeps the last good one for its name;
 * of two profiles that claim the same prefix, container, role or binding the older one wins.
 * Both services run this same function, so they agree on what is in force.
 */
export function resolveProfiles(entries: readonly AgentProfileEntry[], previous: readonly ProfileInForce[]): ProfileSet {
  const ordered = [...entries].sort((a, b) => (a.createdAt === b.createdAt ? cmp(a.name, b.name) : cmp(a.createdAt, b.createdAt)));
  const candidates: { entry: AgentProfileEntry; inForce?: ProfileInForce }[] = ordered.map((entry) => ({
    entry,
    inForce: entry.profile.ok ? { profile: entry.profile.value, generation: entry.generation } : previous.find((p) => p.profile.name === entry.name),
  }));
  const conflicts = new Map(profileConflicts(candidates.flatMap((c) => (c.inForce ? [c.inForce.profile] : []))).map((c) => [c.name, c.problem]));
  const inForce: ProfileInForce[] = [];
  const verdicts: ProfileVerdict[] = [];
  for (const { entry, inForce: candidate } of candidates) {
    const conflict = conflicts.get(entry.name);
    if (candidate && conflict === undefined) inForce.push(candidate);
    const kept = candidate && conflict === undefined ? candidate.generation : undefined;
    const base = { name: entry.name, generation: entry.generation, ...(kept === undefined ? {} : { inForceGeneration: kept }) };
    if (!entry.profile.ok) {
      const stays = kept === undefined ? 'no generation of it is in force' : `generation ${kept} stays in force`;
      verdicts.push({ ...base, accepted: false, reason: 'Invalid', message: `${entry.profile.error.split('\n').join('; ')} (${stays})` });
    } else if (conflict !== undefined) {
      verdicts.push({ ...base, accepted: false, reason: 'Conflict', message: `${conflict}; the older profile wins and this one is not in force` });
    } else {
      verdicts.push({ ...base, accepted: true, reason: 'Valid', message: `generation ${entry.generation} is in force` });
    }
  }
  return { inForce, verdicts };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
