import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppModule } from './app.module.js';
import { SyncerService } from './controller/syncer.service.js';
import { HealthController } from '@outrigger/service';
import { RbacSyncerHealth } from './health/rbac-syncer.health.js';
import { RbacSyncerMetrics } from './metrics/rbac-syncer.metrics.js';

// Fails loudly if a tooling change drops decorator metadata (Nest then cannot inject by type).
describe('AppModule (DI smoke)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('compiles and resolves its main providers', async () => {
    // Only the cluster connection is stubbed; everything else is the real module graph.
    vi.spyOn(SyncerService.prototype, 'onModuleInit').mockResolvedValue(undefined);
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
    const syncer = app.get(SyncerService);
    expect(syncer).toBeInstanceOf(SyncerService);
    const injected = syncer as unknown as { config: { graceMs: number; port: number }; metrics: unknown };
    expect(injected.config.graceMs).toBe(60_000);
    expect(injected.config.port).toBe(8080);
    expect(injected.metrics).toBeInstanceOf(RbacSyncerMetrics);
    expect(app.get(RbacSyncerHealth)).toBeInstanceOf(RbacSyncerHealth);
    expect(app.get(HealthController)).toBeInstanceOf(HealthController);
    expect(syncer.status().synced).toBe(false);
    await app.close();
  });
});
