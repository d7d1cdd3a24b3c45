import { type AgentProfile, profileHash } from '@outrigger/agent-profiles';
import { describePermission, type KubeClient, missingPermissions } from '@outrigger/kube';
import { rbacSyncerProfilePermissions } from '@outrigger/install';

/**
 * Per profile spec (name and hash): the permissions the syncer lacks to sync it, as the API server
 * answered. A profile whose permissions are missing keeps its RBAC as it is and says so on its status.
 */
export class ProfilePermissions {
  private readonly missing = new Map<string, string[]>();

  constructor(
    private readonly kc: KubeClient,
    private readonly execGuardName: string,
    private readonly log: { error(m: string): void; warn(m: string): void },
  ) {}

  /** What the syncer lacks for the profile's RBAC ([] when it holds all); undefined without RBAC or until asked. */
  missingFor(profile: AgentProfile | undefined): readonly string[] | undefined {
    return profile?.rbac ? this.missing.get(permissionKey(profile)) : undefined;
  }

  holds(profile: AgentProfile): boolean {
    return profile.rbac !== undefined && this.missing.get(permissionKey(profile))?.length === 0;
  }

  lacks(profile: AgentProfile): boolean {
    return (this.missing.get(permissionKey(profile))?.length ?? 0) > 0;
  }

  /** Asks the API server at the next check (a grant may have come). */
  forget(profile: AgentProfile): void {
    this.missing.delete(permissionKey(profile));
  }

  /** Asks the API server, unless already answered for this spec; if it cannot answer yet, asks again later and calls `retried`. */
  async check(profile: AgentProfile, retried: () => void): Promise<void> {
    const key = permissionKey(profile);
    if (!profile.rbac || this.missing.has(key)) return;
    try {
      const missing = await missingPermissions(this.kc, rbacSyncerProfilePermissions(profile, this.execGuardName));
      this.missing.set(key, [...new Set(missing.map(describePermission))]);
      if (missing.length > 0) this.log.error(`AgentProfile ${profile.name}: not synced, the rbac-syncer lacks ${this.missing.get(key)?.join(', ')}`);
    } catch (error) {
      this.log.warn(`AgentProfile ${profile.name}: cannot check permissions yet: ${error instanceof Error ? error.message : String(error)}`);
      setTimeout(() => void this.check(profile, retried).then(retried), PERMISSION_RETRY_MS).unref();
    }
  }
}

/** How soon a permission check the API server could not answer is asked again. */
const PERMISSION_RETRY_MS = 5_000;

function permissionKey(profile: AgentProfile): string {
  return `${profile.name}@${profileHash(profile)}`;
}
