import { AGENT_PROFILE_API_VERSION, AGENT_PROFILE_KIND } from '@outrigger/agent-profiles';
import { classifyApiError, kubeJson, resourcePath, type KubeClient } from '@outrigger/kube';
import type { ProfileStatus } from '../desired/profile-status.js';
import { FIELD_MANAGER } from '../desired/rbac-objects.js';

/** Server-side apply of an AgentProfile's status; a profile deleted meanwhile is not an error. */
export async function writeProfileStatus(kc: KubeClient, name: string, status: ProfileStatus): Promise<void> {
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
