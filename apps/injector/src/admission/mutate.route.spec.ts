import type { FastifyReply, FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { InjectorConfig } from '../config/injector.config.js';
import type { AdmissionService } from './admission.service.js';
import { DRAIN_MS, MutateRoute } from './mutate.route.js';

function fakeReply() {
  const headers: Record<string, string> = {};
  const reply = {
    header: (name: string, value: string) => ((headers[name] = value), reply),
    type: () => reply,
    code: () => reply,
    send: () => reply,
  };
  return { reply: reply as unknown as FastifyReply, headers };
}

describe('MutateRoute shutdown', () => {
  const admission = { review: () => ({ ok: true, value: { response: {} } }) } as unknown as AdmissionService;
  const config = { tls: {} } as unknown as InjectorConfig;
  const request = { headers: { 'content-type': 'application/json' }, body: Buffer.from('{}'), raw: { socket: {} } } as unknown as FastifyRequest;
  afterEach(() => vi.useRealTimers());

  it('keeps answering for DRAIN_MS once shutdown begins, each answer asking the client to close the connection', async () => {
    vi.useFakeTimers();
    const route = new MutateRoute({} as never, admission, config);
    const before = fakeReply();
    route.mutate(request, before.reply);
    expect(before.headers).toEqual({});

    let drained = false;
    const shutdown = route.beforeApplicationShutdown().then(() => (drained = true));
    const during = fakeReply();
    route.mutate(request, during.reply);
    expect(during.headers).toEqual({ connection: 'close' });
    await vi.advanceTimersByTimeAsync(DRAIN_MS - 1);
    expect(drained).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await shutdown;
    expect(drained).toBe(true);
  });
});
