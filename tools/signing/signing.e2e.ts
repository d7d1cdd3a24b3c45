import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, repoRoot, resolveToolDir, runBuildScript } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The release's signing and verification path, offline: a CNCF Distribution registry on 127.0.0.1
 * (tools/registry), the pause image built with buildah from tools/images/pause.Dockerfile and pushed
 * to it, signed with a key pair by cosign and given an SPDX SBOM (syft) and a SLSA provenance
 * predicate as attestations (tools/signing: both built from their Go modules). Nothing may leave the
 * machine: no transparency log, no TUF, and a proxy that answers nothing for anything not loopback.
 */
const dir = mkdtempSync(join(tmpdir(), 'outrigger-signing-'));
const PASSWORD = 'signing-e2e';
let cosignBin: string;
let syftBin: string;
let helmBin: string;
let registryHost: string;
let registry: ChildProcess | undefined;
let repository: string;
let signed: string;
let other: string;

const env = {
  ...process.env,
  HOME: join(dir, 'home'),
  COSIGN_PASSWORD: PASSWORD,
  // Loopback is never proxied; anything else would go to a port where nothing listens.
  HTTPS_PROXY: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
  NO_PROXY: '127.0.0.1',
  SYFT_CHECK_FOR_APP_UPDATE: 'false',
  SYFT_REGISTRY_INSECURE_USE_HTTP: 'true',
  HELM_CACHE_HOME: join(dir, 'helm', 'cache'),
  HELM_CONFIG_HOME: join(dir, 'helm', 'config'),
  HELM_DATA_HOME: join(dir, 'helm', 'data'),
};

function run(bin: string, args: readonly string[]): { code: number; out: string } {
  const result = spawnSync(bin, args, { encoding: 'utf8', env, cwd: dir, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
  return { code: result.status ?? -1, out: `${result.stdout}${result.stderr}` };
}
function ok(bin: string, args: readonly string[]): string {
  const result = run(bin, args);
  if (result.code !== 0) throw new Error(`${bin} ${args.join(' ')}: exit ${result.code}\n${result.out}`);
  return result.out;
}
const buildah = (args: readonly string[]) => ok('buildah', ['--root', join(dir, 'storage'), '--runroot', join(dir, 'storage-run'), '--storage-driver', 'vfs', ...args]);

// Signing with a key needs no Sigstore service: an empty signing config and trusted root keep cosign from TUF and Rekor.
const KEYED = (key: string) => ['--key', key, '--signing-config', 'signing-config.json', '--trusted-root', 'trusted-root.json', '--yes'];
const VERIFY = (key: string) => ['--key', key, '--insecure-ignore-tlog=true'];

/** The in-toto statement of the one attestation of `type` that verifies, decoded. */
function verifiedAttestation(type: string, image: string, key = 'cosign.pub'): { predicateType: string; subject: { digest: { sha256: string } }[]; predicate: Record<string, unknown> } {
  const out = ok(cosignBin, ['verify-attestation', ...VERIFY(key), '--type', type, image]);
  const envelope = JSON.parse(out.split('\n').find((l) => l.startsWith('{')) as string) as { payload: string };
  return JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
}

async function registryUp(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (registry?.exitCode !== null) throw new Error(`the registry exited: ${readFileSync(join(dir, 'registry.log'), 'utf8')}`);
    if (await fetch(url).then((r) => r.status === 200, () => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the registry never answered ${url}`);
}

beforeAll(async () => {
  mkdirSync(env.HOME);
  [cosignBin, syftBin] = await Promise.all([
    resolveToolDir('OUTRIGGER_COSIGN_BIN', 'tools/signing/cosign/build.sh', ['cosign']).then((d) => join(d, 'cosign')),
    resolveToolDir('OUTRIGGER_SYFT_BIN', 'tools/signing/syft/build.sh', ['syft']).then((d) => join(d, 'syft')),
  ]);
  const registryBin = join(await resolveToolDir('OUTRIGGER_REGISTRY_BIN', 'tools/registry/build.sh', ['registry']), 'registry');
  helmBin = join(await resolveToolDir('OUTRIGGER_HELM_BIN', 'tools/helm/helm/build.sh', ['helm']), 'helm');
  const programs = await runBuildScript('tools/kube/build.sh', ['pause']);

  const port = await freePort();
  writeFileSync(join(dir, 'registry.yaml'), `version: 0.1\nlog: { level: warn }\nstorage: { filesystem: { rootdirectory: ${join(dir, 'registry')} } }\nhttp: { addr: 127.0.0.1:${port} }\n`);
  registry = spawn(registryBin, ['serve', join(dir, 'registry.yaml')], { stdio: ['ignore', 'ignore', openSync(join(dir, 'registry.log'), 'w')] });
  await registryUp(`http://127.0.0.1:${port}/v2/`);
  registryHost = `127.0.0.1:${port}`;
  repository = `${registryHost}/outrigger/pause`;

  // The pause image as tools/images/build.sh makes it (its Dockerfile, our static pause program), and
  // another image in the same repository that nobody signed.
  mkdirSync(join(dir, 'context'));
  copyFileSync(join(programs, 'pause'), join(dir, 'context', 'pause'));
  const dockerfile = join(repoRoot(), 'tools', 'images', 'pause.Dockerfile');
  const push = (tag: string, label: string) => {
    buildah(['bud', '--quiet', '--isolation', 'chroot', '--label', label, '-f', dockerfile, '-t', `localhost/signing-e2e:${tag}`, join(dir, 'context')]);
    buildah(['push', '--quiet', '--tls-verify=false', '--digestfile', join(dir, `${tag}.digest`), `localhost/signing-e2e:${tag}`, `docker://${repository}:${tag}`]);
    return `${repository}@${readFileSync(join(dir, `${tag}.digest`), 'utf8').trim()}`;
  };
  signed = push('release', 'outrigger.dev/e2e=release');
  other = push('other', 'outrigger.dev/e2e=other');
  expect(signed).not.toBe(other);

  ok(cosignBin, ['generate-key-pair']);
  mkdirSync(join(dir, 'stranger'));
  ok(cosignBin, ['generate-key-pair', '--output-key-prefix', 'stranger/cosign']);
  ok(cosignBin, ['signing-config', 'create', '--out', 'signing-config.json']);
  writeFileSync(join(dir, 'trusted-root.json'), JSON.stringify({ mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1' }));
}, 1_800_000);

afterAll(async () => {
  if (registry && registry.exitCode === null) {
    const exited = new Promise((resolve) => registry?.once('exit', resolve));
    registry.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('signing a release image with a key pair (cosign, offline, against a local registry)', () => {
  it('cosign sign: verify passes for the signed digest with its key, and fails for an unsigned digest and for another key', () => {
    const out = ok(cosignBin, ['sign', ...KEYED('cosign.key'), signed]);
    expect(out).not.toMatch(/TUF|rekor/i);
    const verified = JSON.parse(ok(cosignBin, ['verify', ...VERIFY('cosign.pub'), signed]).split('\n').find((l) => l.startsWith('[')) as string) as { critical: { image: { 'docker-manifest-digest': string } } }[];
    expect(verified.map((s) => s.critical.image['docker-manifest-digest'])).toEqual([signed.split('@')[1]]);
    const unsigned = run(cosignBin, ['verify', ...VERIFY('cosign.pub'), other]);
    expect(unsigned.code).not.toBe(0);
    expect(unsigned.out).toMatch(/no signatures found|no matching signatures/);
    const stranger = run(cosignBin, ['verify', ...VERIFY('stranger/cosign.pub'), signed]);
    expect(stranger.code).not.toBe(0);
    expect(stranger.out).toMatch(/no matching (signatures|attestations): failed to verify signature/);
  });

  it('an SPDX SBOM made by syft from the pushed image, attested: verify-attestation passes with the key and returns it, fails for another digest or key', () => {
    ok(syftBin, ['scan', `registry:${signed}`, '-o', `spdx-json=${join(dir, 'sbom.spdx.json')}`, '-q']);
    const sbom = JSON.parse(readFileSync(join(dir, 'sbom.spdx.json'), 'utf8')) as { spdxVersion: string; files?: { fileName: string }[]; packages: { name: string }[] };
    expect(sbom.spdxVersion).toMatch(/^SPDX-2\./);
    ok(cosignBin, ['attest', ...KEYED('cosign.key'), '--type', 'spdxjson', '--predicate', 'sbom.spdx.json', signed]);
    const statement = verifiedAttestation('spdxjson', signed);
    expect(statement.predicateType).toBe('https://spdx.dev/Document');
    expect(statement.subject.map((s) => `sha256:${s.digest.sha256}`)).toEqual([signed.split('@')[1]]);
    expect(statement.predicate).toEqual(sbom);
    expect(run(cosignBin, ['verify-attestation', ...VERIFY('cosign.pub'), '--type', 'spdxjson', other]).code).not.toBe(0);
    expect(run(cosignBin, ['verify-attestation', ...VERIFY('stranger/cosign.pub'), '--type', 'spdxjson', signed]).code).not.toBe(0);
  });

  it('a SLSA provenance predicate, attested: verify-attestation passes with the key and returns it, fails for another digest or key', () => {
    const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
    const provenance = {
      buildDefinition: {
        buildType: 'https://outrigger.dev/tools/images/build.sh@v1',
        externalParameters: { dockerfile: 'tools/images/pause.Dockerfile' },
        resolvedDependencies: [
          { uri: 'tools/images/pause.Dockerfile', digest: { sha256: sha256(join(repoRoot(), 'tools', 'images', 'pause.Dockerfile')) } },
          { uri: 'tools/kube/cmd/pause', digest: { sha256: sha256(join(dir, 'context', 'pause')) } },
        ],
      },
      runDetails: { builder: { id: 'https://outrigger.dev/tools/signing/signing.e2e.ts' } },
    };
    writeFileSync(join(dir, 'provenance.json'), JSON.stringify(provenance));
    ok(cosignBin, ['attest', ...KEYED('cosign.key'), '--type', 'slsaprovenance1', '--predicate', 'provenance.json', signed]);
    const statement = verifiedAttestation('slsaprovenance1', signed);
    expect(statement.predicateType).toBe('https://slsa.dev/provenance/v1');
    expect(statement.predicate).toEqual(provenance);
    expect(run(cosignBin, ['verify-attestation', ...VERIFY('cosign.pub'), '--type', 'slsaprovenance1', other]).code).not.toBe(0);
    expect(run(cosignBin, ['verify-attestation', ...VERIFY('stranger/cosign.pub'), '--type', 'slsaprovenance1', signed]).code).not.toBe(0);
  });

  it('the chart, pushed by helm as an OCI artifact as the release does, signed: verify passes with the key and fails with another', () => {
    ok(helmBin, ['package', join(repoRoot(), 'deploy', 'helm', 'outrigger'), '--version', '0.0.0-e2e', '--destination', dir]);
    const pushed = ok(helmBin, ['push', join(dir, 'outrigger-0.0.0-e2e.tgz'), `oci://${registryHost}/charts`, '--plain-http']);
    // The release workflow reads the chart's digest from this line too.
    const digest = /^Digest: (sha256:[0-9a-f]{64})$/m.exec(pushed)?.[1];
    expect(digest, pushed).toBeDefined();
    const chart = `${registryHost}/charts/outrigger@${digest}`;
    ok(cosignBin, ['sign', ...KEYED('cosign.key'), chart]);
    expect(run(cosignBin, ['verify', ...VERIFY('cosign.pub'), chart]).code).toBe(0);
    expect(run(cosignBin, ['verify', ...VERIFY('stranger/cosign.pub'), chart]).code).not.toBe(0);
  });
});
