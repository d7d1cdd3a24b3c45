import type { AgentProfileEntry } from './agent-profile-object.js';
import { profileHash } from './profile-hash.js';
import { resolveProfiles, type ProfileInForce, type ProfileVerdict } from './profile-set.js';

/** What one more resolution of the listed AgentProfiles changed. */
export interface ProfileSetChange {
  readonly inForce: readonly ProfileInForce[];
  /** The profiles in force differ by name or content from the previous resolution (a status write or a refused edit changes none). */
  readonly changed: boolean;
  /** The verdicts that are new or differ from the previous resolution: each is reported once. */
  readonly newVerdicts: readonly ProfileVerdict[];
}

/**
 * Follows the AgentProfile objects a watch lists, for the injector and the rbac-syncer alike:
 * resolves them against what was in force before and says what changed, so both services keep
 * the last good generation and report each verdict once in the same way.
 */
export class ProfileSetTracker {
  private inForce: readonly ProfileInForce[] = [];
  private verdicts = new Map<string, ProfileVerdict>();
  private resolved = false;

  update(entries: readonly AgentProfileEntry[]): ProfileSetChange {
    const set = resolveProfiles(entries, this.inForce);
    const changed = !this.resolved || signature(set.inForce) !== signature(this.inForce);
    const newVerdicts = set.verdicts.filter((v) => {
      const before = this.verdicts.get(v.name);
      return before?.message !== v.message || before.generation !== v.generation;
    });
    this.inForce = set.inForce;
    this.verdicts = new Map(set.verdicts.map((v) => [v.name, v]));
    this.resolved = true;
    return { inForce: set.inForce, changed, newVerdicts };
  }

  /** The latest verdict on each listed AgentProfile, by name. */
  verdict(name: string): ProfileVerdict | undefined {
    return this.verdicts.get(name);
  }

  /** The names of every listed AgentProfile, in force or not. */
  names(): string[] {
    return [...this.verdicts.keys()];
  }
}

/** How a verdict is logged, the same in both services. */
export function describeVerdict(verdict: ProfileVerdict): string {
  return `AgentProfile ${verdict.name} generation ${verdict.generation}: ${verdict.message}`;
}

/** A profile set by name and content, independent of order. */
function signature(set: readonly ProfileInForce[]): string {
  return set.map(({ profile }) => `${profile.name}@${profileHash(profile)}`).sort().join(' ');
}
