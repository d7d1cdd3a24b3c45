import { XXL_JOB_PROFILE, type JsonObject } from '@outrigger/admission';
import { describe, expect, it } from 'vitest';
import { projectPod } from './pod-view.js';

const profiles = [XXL_JOB_PROFILE];
const raw = (annotations: Record<string, string>, extra: Record<string, JsonObject> = {}): JsonObject => ({
  metadata: { namespace: 'ns', name: 'p', annotations, ...(extra['metadata'] ?? {}) },
  spec: extra['spec'] ?? { containers: [] },
  status: extra['status'] ?? { phase: 'Running' },
});

describe('projectPod', () => {
  it('keeps namespace, name, ServiceAccount (default "default") and opted-in profiles', () => {
    expect(projectPod(raw({ 'xxl-agent/enable': 'true' }), profiles)).toEqual({
      namespace: 'ns',
      name: 'p',
      serviceAccount: 'default',
      profiles: ['xxl-job'],
      deleting: false,
    });
    expect(projectPod(raw({ 'outrigger.dev/inject': 'xxl-job' }, { spec: { serviceAccountName: 'agent' } }), profiles)?.serviceAccount).toBe('agent');
  });

  it('drops pods that did not opt in, opted out, are finished or have invalid annotations', () => {
    expect(projectPod(raw({}), profiles)).toBeUndefined();
    expect(projectPod(raw({ 'xxl-agent/enable': 'false', 'outrigger.dev/inject': 'xxl-job' }), profiles)).toBeUndefined();
    expect(projectPod(raw({ 'xxl-agent/enable': 'true' }, { status: { phase: 'Succeeded' } }), profiles)).toBeUndefined();
    expect(projectPod(raw({ 'xxl-agent/enable': 'true' }, { status: { phase: 'Failed' } }), profiles)).toBeUndefined();
    expect(projectPod(raw({ 'xxl-agent/enable': 'maybe' }), profiles)).toBeUndefined();
  });

  it('marks pods being deleted', () => {
    expect(projectPod(raw({ 'xxl-agent/enable': '1' }, { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' } }), profiles)?.deleting).toBe(true);
  });
});
