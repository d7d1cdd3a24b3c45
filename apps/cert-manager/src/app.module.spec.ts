import 'reflect-metadata';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppModule } from './app.module.js';
import { RotationController } from './controller/rotation-controller.js';
import { RotationReconciler } from './controller/rotation-reconciler.js';
import { CertManagerHealth } from './health/cert-manager.health.js';
import { CertManagerMetrics } from './metrics/cert-manager.metrics.js';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:1' } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;

// Fails loudly if a tooling change drops decorator metadata: the providers below are injected by type.
// The app is created but not initialised, so nothing talks to an API server.
describe('AppModule', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cert-manager-di-'));
    writeFileSync(join(dir, 'kubeconfig'), KUBECONFIG);
    process.env.KUBECONFIG = join(dir, 'kubeconfig');
    process.env.POD_NAMESPACE = 'outrigger-system';
    process.env.LEAF_LIFETIME = '30d';
    app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), { logger: false });
  });

  afterAll(() => app?.close());

  it('resolves its providers', () => {
    const controller = app.get(RotationController);
    expect(app.get(RotationReconciler)).toBeInstanceOf(RotationReconciler);
    expect(app.get(CertManagerMetrics)).toBeInstanceOf(CertManagerMetrics);
    expect(controller.isLeader()).toBe(false);
    expect(controller.readiness()).toEqual({ ready: false, reasons: ['nothing observed yet'] });
    expect(app.get(CertManagerHealth)).toBeInstanceOf(CertManagerHealth);
  });
});
