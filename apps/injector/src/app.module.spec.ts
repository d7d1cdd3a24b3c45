import 'reflect-metadata';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { issueCertificate } from '@outrigger/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdmissionService } from './admission/admission.service.js';
import { AppModule } from './app.module.js';
import { ProfilesService } from './profiles/profiles.service.js';
import { ServingCertificateSource } from './tls/serving-certificate.source.js';

// Fails loudly if a tooling change drops decorator metadata: every provider below is injected by type.
describe('AppModule', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'injector-di-'));
    const ca = issueCertificate({ commonName: 'ca', usage: 'ca', lifetimeMs: 3_600_000 });
    const leaf = issueCertificate({ commonName: 'injector', usage: 'server', issuer: ca, lifetimeMs: 3_600_000, dnsNames: ['localhost'] });
    writeFileSync(join(dir, 'tls.crt'), leaf.cert);
    writeFileSync(join(dir, 'tls.key'), leaf.key);
    process.env.TLS_CERT_FILE = join(dir, 'tls.crt');
    process.env.TLS_KEY_FILE = join(dir, 'tls.key');
    process.env.PROFILES_FILE = REFERENCE_PROFILE_FILE;
    app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter({ https: { cert: leaf.cert, key: leaf.key } }), { logger: false });
    await app.init();
  });

  afterAll(() => app?.close());

  it('resolves its providers and injects a reference pod', () => {
    expect(app.get(ProfilesService).current()?.profiles.map((p) => p.name)).toEqual(['xxl-job']);
    expect(app.get(ServingCertificateSource).status()?.notAfter).toBeInstanceOf(Date);
    const body = readFileSync(new URL('../../../libs/admission/fixtures/reviews/v1-pod-opted-in.json', import.meta.url));
    const result = app.get(AdmissionService).review('application/json', body);
    expect(result.ok && result.value.response.allowed).toBe(true);
    expect(result.ok && result.value.response.patchType).toBe('JSONPatch');
  });

  it('serves POST /mutate with the raw body: a review for a pod, a Nest-shaped 400 for a wrong content type', async () => {
    const fastify = app.getHttpAdapter().getInstance();
    const body = readFileSync(new URL('../../../libs/admission/fixtures/reviews/v1-pod-opted-in.json', import.meta.url));
    const injected = await fastify.inject({ method: 'POST', url: '/mutate', headers: { 'content-type': 'application/json' }, payload: body });
    expect(injected.statusCode).toBe(200);
    expect(injected.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(injected.json<{ response: { patchType?: string } }>().response.patchType).toBe('JSONPatch');

    const refused = await fastify.inject({ method: 'POST', url: '/mutate', headers: { 'content-type': 'text/plain' }, payload: body });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: 'content-type must be application/json, got "text/plain"' });
  });
});
