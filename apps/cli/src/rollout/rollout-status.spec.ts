import { describe, expect, it } from 'vitest';
import { rolloutStatus } from './rollout-status.js';

const deployment = (status: object, spec: object = { replicas: 3 }, generation = 2) => ({ metadata: { generation }, spec, status: { observedGeneration: 2, ...status } });

describe('rolloutStatus (the conditions kubectl rollout status waits on)', () => {
  it('Deployment: waits for the change to be observed, new replicas, old ones to go, updated ones to be available', () => {
    expect(rolloutStatus('Deployment', deployment({ updatedReplicas: 3, replicas: 3, availableReplicas: 3 }, { replicas: 3 }, 3))).toMatchObject({ state: 'rolling', message: expect.stringMatching(/observe/) });
    expect(rolloutStatus('Deployment', deployment({ updatedReplicas: 1, replicas: 4, availableReplicas: 3 }))).toEqual({ state: 'rolling', message: '1 of 3 new replicas updated' });
    expect(rolloutStatus('Deployment', deployment({ updatedReplicas: 3, replicas: 4, availableReplicas: 3 }))).toEqual({ state: 'rolling', message: '1 old replicas pending termination' });
    expect(rolloutStatus('Deployment', deployment({ updatedReplicas: 3, replicas: 3, availableReplicas: 2 }))).toEqual({ state: 'rolling', message: '2 of 3 updated replicas available' });
    expect(rolloutStatus('Deployment', deployment({ updatedReplicas: 3, replicas: 3, availableReplicas: 3 }))).toMatchObject({ state: 'done' });
  });

  it('Deployment: past its progress deadline is failed, whatever the counts', () => {
    const stuck = deployment({ updatedReplicas: 1, replicas: 4, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "web-7d9" has timed out progressing.' }] });
    expect(rolloutStatus('Deployment', stuck)).toEqual({ state: 'failed', message: 'exceeded its progress deadline: ReplicaSet "web-7d9" has timed out progressing.' });
  });

  it('DaemonSet: updated and available against the desired number; OnDelete has no rollout to wait for', () => {
    const ds = (status: object, type = 'RollingUpdate') => ({ metadata: { generation: 1 }, spec: { updateStrategy: { type } }, status: { observedGeneration: 1, desiredNumberScheduled: 2, ...status } });
    expect(rolloutStatus('DaemonSet', ds({ updatedNumberScheduled: 1, numberAvailable: 2 }))).toEqual({ state: 'rolling', message: '1 of 2 new pods updated' });
    expect(rolloutStatus('DaemonSet', ds({ updatedNumberScheduled: 2, numberAvailable: 1 }))).toEqual({ state: 'rolling', message: '1 of 2 updated pods available' });
    expect(rolloutStatus('DaemonSet', ds({ updatedNumberScheduled: 2, numberAvailable: 2 }))).toMatchObject({ state: 'done' });
    expect(rolloutStatus('DaemonSet', ds({}, 'OnDelete'))).toMatchObject({ state: 'failed' });
  });

  it('StatefulSet: ready replicas, then the partition (what the API server defaults), else the revisions', () => {
    const sts = (status: object, rollingUpdate?: object) => ({ metadata: { generation: 4 }, spec: { replicas: 3, updateStrategy: { type: 'RollingUpdate', ...(rollingUpdate ? { rollingUpdate } : {}) } }, status: { observedGeneration: 4, ...status } });
    expect(rolloutStatus('StatefulSet', { ...sts({}), status: { observedGeneration: 0 } })).toMatchObject({ state: 'rolling' });
    expect(rolloutStatus('StatefulSet', sts({ readyReplicas: 2 }, { partition: 0 }))).toEqual({ state: 'rolling', message: '1 pods not ready' });
    expect(rolloutStatus('StatefulSet', sts({ readyReplicas: 3, updatedReplicas: 2 }, { partition: 0 }))).toEqual({ state: 'rolling', message: '2 of 3 new pods updated' });
    expect(rolloutStatus('StatefulSet', sts({ readyReplicas: 3, updatedReplicas: 3 }, { partition: 0 }))).toMatchObject({ state: 'done' });
    expect(rolloutStatus('StatefulSet', sts({ readyReplicas: 3, updatedReplicas: 1 }, { partition: 2 }))).toMatchObject({ state: 'done' });
    expect(rolloutStatus('StatefulSet', sts({ readyReplicas: 3, updateRevision: 'pg-2', currentRevision: 'pg-1', updatedReplicas: 1 }))).toEqual({ state: 'rolling', message: '1 pods at revision pg-2' });
    expect(rolloutStatus('StatefulSet', sts({ readyReplicas: 3, updateRevision: 'pg-2', currentRevision: 'pg-2', currentReplicas: 3 }))).toMatchObject({ state: 'done' });
  });

  it('other kinds have no rollout', () => {
    expect(rolloutStatus('CronJob', {})).toMatchObject({ state: 'failed' });
  });
});
