import { describe, expect, it } from 'vitest';
import type { WorkloadRef } from '../agents/workload-owner.js';
import { planRestarts, RESTARTED_AT, restartPatch, type RestartTarget } from './restart-plan.js';

const ref = (kind: string, name: string, known = true): WorkloadRef => ({ kind, namespace: 'shop', name, apiVersion: kind === 'Pod' ? 'v1' : kind.endsWith('Job') ? 'batch/v1' : 'apps/v1', known });
const rolledOut = { metadata: { generation: 2 }, spec: { replicas: 2 }, status: { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2 } };
const target = (workload: WorkloadRef, object?: object): RestartTarget => ({ workload, pods: 2, object });
const decide = (t: RestartTarget) => {
  const [d] = planRestarts([t]);
  return d?.action === 'skip' ? d.reason : d?.action;
};

describe('planRestarts', () => {
  it('restarts Deployments, StatefulSets and DaemonSets whose last rollout is done', () => {
    expect(decide(target(ref('Deployment', 'web'), rolledOut))).toBe('restart');
    const sts = { metadata: { generation: 1 }, spec: { replicas: 1, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } } }, status: { observedGeneration: 1, readyReplicas: 1, updatedReplicas: 1 } };
    expect(decide(target(ref('StatefulSet', 'pg'), sts))).toBe('restart');
    const ds = { metadata: { generation: 1 }, spec: { updateStrategy: { type: 'RollingUpdate' } }, status: { observedGeneration: 1, desiredNumberScheduled: 1, updatedNumberScheduled: 1, numberAvailable: 1 } };
    expect(decide(target(ref('DaemonSet', 'node-agent'), ds))).toBe('restart');
  });

  it('skips, saying why, what nothing re-creates or what restarts on its own', () => {
    expect(decide(target(ref('Pod', 'debug')))).toMatch(/^a bare pod: nothing re-creates it/);
    expect(decide(target(ref('Job', 'once')))).toMatch(/Job created next gets the agent/);
    expect(decide(target(ref('CronJob', 'nightly')))).toMatch(/next run gets the agent/);
    expect(decide(target(ref('ReplicaSet', 'lone')))).toMatch(/no Deployment owns/);
    expect(decide(target(ref('Rollout', 'canary', false)))).toMatch(/controlled by Rollout \(apps\/v1\), which outrigger does not restart/);
  });

  it('skips what its owner holds or what is already moving: paused, rolling, failed, OnDelete, partitioned, gone', () => {
    expect(decide(target(ref('Deployment', 'web'), { ...rolledOut, spec: { replicas: 2, paused: true } }))).toMatch(/^paused/);
    expect(decide(target(ref('Deployment', 'web'), { ...rolledOut, status: { ...rolledOut.status, updatedReplicas: 1 } }))).toMatch(/^already rolling out \(1 of 2 new replicas updated\)/);
    const stuck = { ...rolledOut, status: { ...rolledOut.status, conditions: [{ type: 'Progressing', reason: 'ProgressDeadlineExceeded', message: 'timed out' }] } };
    expect(decide(target(ref('Deployment', 'web'), stuck))).toMatch(/^its last rollout failed/);
    expect(decide(target(ref('DaemonSet', 'ds'), { spec: { updateStrategy: { type: 'OnDelete' } } }))).toMatch(/OnDelete: its pods are replaced only when deleted/);
    expect(decide(target(ref('StatefulSet', 'pg'), { spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } } }))).toMatch(/partition 2/);
    expect(decide(target(ref('Deployment', 'web')))).toBe('Deployment/web is gone');
  });
});

describe('restartPatch', () => {
  it('sets the pod-template annotation kubectl rollout restart sets, in RFC 3339 seconds', () => {
    expect(restartPatch(new Date('2026-11-25T22:10:05.123Z'))).toEqual({ spec: { template: { metadata: { annotations: { [RESTARTED_AT]: '2026-11-25T22:10:05Z' } } } } });
  });
});
