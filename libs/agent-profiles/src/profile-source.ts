import { err, ok, type Result } from '@outrigger/admission';
import type { AgentProfileEntry } from './agent-profile-object.js';
import { parseProfiles } from './parse-profiles.js';
import type { ProfileInForce, ProfileVerdict } from './profile-set.js';
import { describeVerdict, ProfileSetTracker, type ProfileSetChange } from './profile-set-tracker.js';
import { profileWarnings } from './profile-warnings.js';

export interface ProfileSourceLog {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Where the profiles in force come from, the same for the injector and the rbac-syncer: the
 * AgentProfile objects a watch lists (each keeps its last good generation; every new verdict is
 * logged once) or a profiles file (all or nothing: a bad file keeps the profiles in force). The
 * watch itself is the service's, so this stays free of any client.
 */
export class ProfileSource {
  private readonly tracker = new ProfileSetTracker();
  private current: readonly ProfileInForce[] = [];

  constructor(private readonly logger: ProfileSourceLog) {}

  /** The AgentProfile objects the watch lists now. */
  fromObjects(entries: readonly AgentProfileEntry[]): ProfileSetChange {
    const change = this.tracker.update(entries);
    this.current = change.inForce;
    for (const verdict of change.newVerdicts) this.report(verdict, change.inForce.find((p) => p.profile.name === verdict.name));
    return change;
  }

  /** A profiles file's text: its profiles in force, or why the previous ones stay. */
  fromFile(text: string): Result<ProfileSetChange> {
    const parsed = parseProfiles(text);
    if (!parsed.ok) return err(parsed.error);
    const inForce = parsed.value.map((profile) => ({ profile, generation: 0 }));
    const changed = JSON.stringify(inForce) !== JSON.stringify(this.current);
    this.current = inForce;
    if (changed) parsed.value.flatMap(profileWarnings).forEach((line) => this.logger.warn(line));
    return ok({ inForce, changed, newVerdicts: [] });
  }

  inForce(): readonly ProfileInForce[] {
    return this.current;
  }

  /** The latest verdict on a listed AgentProfile (objects only). */
  verdict(name: string): ProfileVerdict | undefined {
    return this.tracker.verdict(name);
  }

  /** Every listed AgentProfile, in force or not (objects only). */
  names(): string[] {
    return this.tracker.names();
  }

  private report(verdict: ProfileVerdict, inForce: ProfileInForce | undefined): void {
    if (!verdict.accepted) return this.logger.error(describeVerdict(verdict));
    this.logger.log(describeVerdict(verdict));
    if (inForce) profileWarnings(inForce.profile).forEach((line) => this.logger.warn(line));
  }
}
