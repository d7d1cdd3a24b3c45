import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCertificate, type Issued } from '@outrigger/pki';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileCertificateSource } from './file-certificate.source.js';

const ca = issueCertificate({ commonName: 'files-ca', usage: 'ca', lifetimeMs: 3_600_000 });
const leaf = (): Issued => issueCertificate({ commonName: 'injector', usage: 'server', issuer: ca, lifetimeMs: 3_600_000 });

describe('FileCertificateSource', () => {
  let dir: string;
  let source: FileCertificateSource | undefined;
  let changes: number;
  let refusals: string[];
  const events = { changed: () => changes++, refused: (from: string, error: Error) => refusals.push(`${from}: ${error.message}`) };
  const replace = (name: string, text: string) => {
    writeFileSync(join(dir, `.${name}.tmp`), text);
    renameSync(join(dir, `.${name}.tmp`), join(dir, name));
  };
  const write = (pair: Issued) => (replace('tls.key', pair.key), replace('tls.crt', pair.cert));
  const start = (paused?: () => boolean) =>
    (source = new FileCertificateSource({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), pollMs: 20, paused }, events).start());
  const until = async (condition: () => boolean) => {
    for (let i = 0; i < 250 && !condition(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(condition()).toBe(true);
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'file-source-'));
    changes = 0;
    refusals = [];
  });
  afterEach(() => {
    source?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the pair at start, then each new one the files bring', async () => {
    const first = leaf();
    write(first);
    const files = start();
    expect(files.current()?.cert).toBe(first.cert);
    expect(files.current()?.source).toBe(`file ${join(dir, 'tls.crt')}`);
    expect(changes).toBe(1);

    const next = leaf();
    write(next);
    await until(() => files.current()?.cert === next.cert);
    expect(changes).toBe(2);
  });

  it('refuses a broken candidate once, naming the file, and keeps the last good pair', async () => {
    const good = leaf();
    write(good);
    const files = start();
    replace('tls.crt', 'not a certificate');
    await until(() => refusals.length > 0);
    await new Promise((r) => setTimeout(r, 100)); // several polls: judged once
    expect(refusals).toEqual([`file ${join(dir, 'tls.crt')}: TLS_CERT_FILE=${join(dir, 'tls.crt')}: not a PEM certificate`]);
    expect(files.current()?.cert).toBe(good.cert);
  });

  it('does not read the files while paused', async () => {
    const first = leaf();
    write(first);
    let paused = false;
    const files = start(() => paused);
    paused = true;
    write(leaf());
    await new Promise((r) => setTimeout(r, 100));
    expect(files.current()?.cert).toBe(first.cert);
    paused = false;
    await until(() => files.current()?.cert !== first.cert);
  });
});
