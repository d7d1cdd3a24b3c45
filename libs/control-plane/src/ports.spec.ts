import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from './ports.js';

const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

describe('freePort', () => {
  it('chooses a port no outgoing connection can take: below the ephemeral range and the NodePort range', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(Math.min(30_000, ephemeralStart));
    }
  });

  it('chooses a port a server can then bind on every address', async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((done, fail) => server.once('error', fail).listen({ port, host: '0.0.0.0' }, done));
    await new Promise((done) => server.close(done));
  });
});
