import 'reflect-metadata';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { KubeClient } from '@outrigger/kube';
import { describe, expect, it } from 'vitest';
import { KUBE_CLIENT, KubeClientModule } from './kube-client.module.js';

const dir = mkdtempSync(join(tmpdir(), 'kube-client-module-'));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'c',
    contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
    clusters: [{ name: 'k', cluster: { server: 'https://k.example:6443' } }],
    users: [{ name: 'u', user: { token: 't' } }],
  }),
);

@Injectable()
class Consumer {
  constructor(@Inject(KUBE_CLIENT) readonly kube: KubeClient | undefined) {}
}

/** The options as an app gives them: from its own typed config, through forRootAsync. */
async function consumerWith(options: { kubeconfig?: string; enabled?: boolean }): Promise<Consumer> {
  const CONFIG = Symbol('CONFIG');
  @Module({ providers: [{ provide: CONFIG, useValue: options }], exports: [CONFIG] })
  class ConfigModule {}
  @Module({ imports: [KubeClientModule.forRootAsync({ imports: [ConfigModule], inject: [CONFIG], useFactory: (o: typeof options) => o })], providers: [Consumer] })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
  return app.get(Consumer);
}

describe('KubeClientModule', () => {
  it('provides one client built from the kubeconfig the app names', async () => {
    expect((await consumerWith({ kubeconfig })).kube?.server).toBe('https://k.example:6443');
  });

  it('provides none when the app runs without the API', async () => {
    expect((await consumerWith({ kubeconfig: join(dir, 'missing'), enabled: false })).kube).toBeUndefined();
  });

  it('stops startup on a kubeconfig it cannot read, naming it', async () => {
    await expect(consumerWith({ kubeconfig: join(dir, 'missing') })).rejects.toThrow(`kubeconfig ${join(dir, 'missing')} does not exist`);
  });
});
