import { AGENT_PROFILE_API_VERSION, AGENT_PROFILE_KIND } from '@outrigger/agent-profiles';
import { classifyApiError, kubeJson, resourcePath, type KubeClient } from '@outrigger/kube';
import { onlyCountsDiffer, sameStatus, type ProfileStatus } from '../desired/profile-status.js';
import { FIELD_MANAGER } from '../desired/rbac-objects.js';
import type { RbacSyncerMetrics } from '../metrics/rbac-syncer.metrics.js';

/**
 * Writes AgentProfile statuses, only when they change; a change of the agent counts alone (pod
 * churn moves them all the time) at most every COUNTS_WRITE_MS.
 */
export class ProfileStatusWriter {
  private readonly written = new Map<string, ProfileStatus>();
  private readonly writtenAt = new Map<string, number>();

  constructor(
    private readonly kc: KubeClient,
    private readonly metrics: RbacSyncerMetrics,
  ) {}

  /** Writes `status` unless it is what was written; returns when to look again if only its counts wait. */
  async write(name: string, status: ProfileStatus): Promise<number | undefined> {
    const written = this.written.get(name);
    if (written && sameStatus(written, status)) return undefined;
    const countsDueAt = this.countsDueAt(name);
    if (written && onlyCountsDiffer(written, status) && Date.now() < countsDueAt) return countsDueAt;
    await writeProfileStatus(this.kc, name, status);
    this.metrics.writes.inc({ kind: 'AgentProfile', verb: 'status' });
    this.written.set(name, status);
    this.writtenAt.set(name, Date.now());
    return undefined;
  }

  /** The ServiceAccounts bound, as last written. */
  boundSubjects(name: string): number | undefined {
    return this.written.get(name)?.boundSubjects;
  }

  /** When a change of profile `name`'s counts alone may be written next. */
  countsDueAt(name: string): number {
    return (this.writtenAt.get(name) ?? 0) + COUNTS_WRITE_MS;
  }

  /** A new leader writes every status afresh. */
  clear(): void {
    this.written.clear();
  }
}

/** The least time between two status writes that change only the agent counts. */
const COUNTS_WRITE_MS = 5_000;

/** Server-side apply of an AgentProfile's status; a profile deleted meanwhile is not an error. */
async function writeProfileStatus(kc: KubeClient, name: string, status: ProfileStatus): Promise<void> {
  const path = resourcePath({ apiVersion: AGENT_PROFILE_API_VERSION, resource: 'agentprofiles', name, subresource: 'status' });
  try {
    await kubeJson(kc, {
      method: 'PATCH',
      path,
      timeoutMs: 30_000,
      query: { fieldManager: FIELD_MANAGER, force: true },
      contentType: 'application/apply-patch+yaml',
      body: { apiVersion: AGENT_PROFILE_API_VERSION, kind: AGENT_PROFILE_KIND, metadata: { name }, status },
    });
  } catch (error) {
    if (classifyApiError(error).kind !== 'notFound') throw error;
  }
}
