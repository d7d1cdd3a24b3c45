import { HealthIndicatorService } from '@nestjs/terminus';
import { describe, expect, it } from 'vitest';
import type { RbacSyncerConfig } from '../config/rbac-syncer.config.js';
import type { SyncerController, SyncerStatus } from '../controller/syncer-controller.js';
import { RbacSyncerHealth } from './rbac-syncer.health.js';

function health(status: Partial<SyncerStatus>) {
  const full: SyncerStatus = { profiles: ['xxl-job'], synced: true, viewComplete: true, incompleteForMs: 0, leader: false, watches: {}, ...status };
  const syncer = { status: () => full } as unknown as SyncerController;
  return new RbacSyncerHealth(new HealthIndicatorService(), syncer, { unhealthyAfterMs: 60_000 } as RbacSyncerConfig);
}

describe('RbacSyncerHealth', () => {
  it('is ready only after the first full sync', () => {
    expect(health({ synced: false }).synced()).toMatchObject({ sync: { status: 'down' } });
    expect(health({ synced: true }).synced()).toMatchObject({ sync: { status: 'up' } });
  });

  it('tolerates a short watch outage but not a long one', () => {
    expect(health({ viewComplete: false, incompleteForMs: 5_000 }).watch()).toMatchObject({ watch: { status: 'up' } });
    expect(health({ viewComplete: false, incompleteForMs: 61_000 }).watch()).toMatchObject({ watch: { status: 'down' } });
  });
});
