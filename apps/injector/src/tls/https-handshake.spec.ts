import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:tls';
import { issueCertificate } from '@outrigger/pki';
import { afterEach, describe, expect, it } from 'vitest';
import { askBeforeEachHandshake } from './https-handshake.js';
import { type ServingPair, checkServingPair, secureContextOptions } from './serving-pair.js';

const ca = issueCertificate({ commonName: 'handshake-ca', usage: 'ca', lifetimeMs: 3_600_000 });
const pair = (commonName: string): ServingPair => {
  const issued = issueCertificate({ commonName, usage: 'server', issuer: ca, lifetimeMs: 3_600_000, ipAddresses: ['127.0.0.1'] });
  return checkServingPair({ ...issued, source: commonName, certFrom: `${commonName} cert`, keyFrom: `${commonName} key` });
};

describe('askBeforeEachHandshake', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

  async function listen(initial: ServingPair): Promise<number> {
    server = createServer({ cert: initial.cert, key: initial.key }, (_req, res) => res.end('ok'));
    await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
    return (server.address() as AddressInfo).port;
  }

  /** The subject CN the server presents; `servername` undefined: no SNI, as a client dialing an IP. */
  function presented(port: number, servername?: string): Promise<string> {
    return new Promise((done, fail) => {
      // The certificate is for 127.0.0.1: with a name sent as SNI, the name is not what is checked here.
      const socket = connect({ host: '127.0.0.1', port, ca: ca.cert, servername, checkServerIdentity: () => undefined }, () => {
        done(String(socket.getPeerCertificate().subject.CN));
        socket.end();
      });
      socket.on('error', fail);
    });
  }

  it('presents what the source answers now, with or without SNI', async () => {
    const a = pair('a');
    const b = pair('b');
    let current = a;
    const port = await listen(pair('startup'));
    let asked = 0;
    askBeforeEachHandshake(server as Server, { current: () => (asked++, current) }, (p) => secureContextOptions(p), () => undefined);
    expect(await presented(port)).toBe('a');
    current = b;
    expect(await presented(port)).toBe('b');
    expect(await presented(port, 'injector.example')).toBe('b');
    expect(asked).toBe(3);
  });

  it('keeps the previous context when the new one cannot be made, and says so once', async () => {
    const a = pair('a');
    const b = pair('b');
    let current = a;
    const port = await listen(a);
    const errors: string[] = [];
    askBeforeEachHandshake(
      server as Server,
      { current: () => current },
      (p) => (p === b ? { cert: p.cert, key: a.key } : secureContextOptions(p)),
      (p, error) => errors.push(`${p.source}: ${error.message}`),
    );
    current = b;
    expect(await presented(port)).toBe('a');
    expect(await presented(port)).toBe('a');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^b: /);
  });

  it('keeps the startup context while the source has nothing', async () => {
    const port = await listen(pair('startup'));
    askBeforeEachHandshake(server as Server, { current: () => undefined }, (p) => secureContextOptions(p), () => undefined);
    expect(await presented(port)).toBe('startup');
  });
});
