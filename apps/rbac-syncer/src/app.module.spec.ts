import 'reflect-metadata';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppModule } from './app.module.js';
import { SyncerController } from './controller/syncer-controller.js';
import { HealthController } from '@outrigger/service';
import { RbacSyncerHealth } from './health/rbac-syncer.health.js';
import { RbacSyncerMetrics } from './metrics/rbac-syncer.metrics.js';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:1' } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;

// Fails loudly if a tooling change drops decorator metadata (Nest then cannot inject by type).
describe('AppModule (DI smoke)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it('compiles and resolves its main providers', async () => {
    // A kubeconfig to an address nothing listens on; only the cluster connection is stubbed, everything else is the real module graph.
    const dir = mkdtempSync(join(tmpdir(), 'rbac-syncer-di-'));
    writeFileSync(join(dir, 'kubeconfig'), KUBECONFIG);
    vi.stubEnv('KUBECONFIG', join(dir, 'kubeconfig'));
    vi.spyOn(SyncerController.prototype, 'onModuleInit').mockResolvedValue(undefined);
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
    const syncer = app.get(SyncerController);
    expect(syncer).toBeInstanceOf(SyncerController);
    const injected = syncer as unknown as { config: { graceMs: number; port: number }; metrics: unknown; kc: { server: string } };
    expect(injected.kc.server).toBe('https://127.0.0.1:1');
    expect(injected.config.graceMs).toBe(60_000);
    expect(injected.config.port).toBe(8080);
    expect(injected.metrics).toBeInstanceOf(RbacSyncerMetrics);
    expect(app.get(RbacSyncerHealth)).toBeInstanceOf(RbacSyncerHealth);
    expect(app.get(HealthController)).toBeInstanceOf(HealthController);
    expect(syncer.status().synced).toBe(false);
    await app.close();
  });
});
