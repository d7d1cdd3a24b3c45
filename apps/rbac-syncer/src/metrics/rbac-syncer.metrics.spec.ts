import { createMetricsRegistry } from '@outrigger/service';
import { describe, expect, it } from 'vitest';
import { RbacSyncerMetrics } from './rbac-syncer.metrics.js';

const samples = async (registry: ReturnType<typeof createMetricsRegistry>, name: string) => (await registry.metrics()).split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe('RbacSyncerMetrics', () => {
  it('exports the exec guard only while a profile binds cluster-wide', async () => {
    const registry = createMetricsRegistry();
    const metrics = new RbacSyncerMetrics(registry);
    let inForce: boolean | undefined;
    metrics.observeExecGuard(() => inForce);
    const guard = () => samples(registry, 'outrigger_rbac_syncer_exec_guard_in_force');
    expect(await guard()).toEqual([]);
    inForce = false;
    expect(await guard()).toEqual(['outrigger_rbac_syncer_exec_guard_in_force 0']);
    inForce = true;
    expect(await guard()).toEqual(['outrigger_rbac_syncer_exec_guard_in_force 1']);
  });
});
