import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DEPLOY_DIR, render, resolveBinaries, type RenderedObject } from '@outrigger/control-plane';
import { parse, parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART_DIR, pinDigests } from '../helm/chart.ts';
import { digestsEnv, imageList, parsePushArgs, parsePushed, pinnedOverlay, RELEASE_IMAGES, tagOf, type Pushed } from './push-plan.ts';

const digest = (n: number) => `sha256:${String(n).repeat(64).slice(0, 64)}`;
const PUSHED: Pushed[] = RELEASE_IMAGES.map((name, i) => ({ name, repository: `registry.example.com:5443/team/outrigger/${name}`, digest: digest(i + 1) }));

describe('parsePushArgs', () => {
  it('takes a registry with a port and path, a tag, and a subset of the images', () => {
    expect(parsePushArgs(['--registry', 'registry.example.com:5443/team/outrigger', '--tag', 'v1.2.0', '--only', 'injector,xxl-agent'])).toEqual({
      registry: 'registry.example.com:5443/team/outrigger',
      tag: 'v1.2.0',
      out: undefined,
      certDir: undefined,
      base: 'deploy/overlays/prod',
      images: ['injector', 'xxl-agent'],
    });
    expect(parsePushArgs(['--registry', '10.245.0.1:5000']).images).toEqual([...RELEASE_IMAGES]);
    expect(parsePushArgs(['--registry', '[::1]:5000/o']).registry).toBe('[::1]:5000/o');
  });

  it.each([
    [[], /--registry is required/],
    [['--registry'], /--registry/],
    [['--registry', 'https://registry.example.com/o'], /--registry https:\/\/registry.example.com\/o: give HOST\[:PORT\]\/PATH without a scheme/],
    [['--registry', 'registry.example.com/Outrigger'], /--registry registry.example.com\/Outrigger: path component "Outrigger" must be lowercase/],
    [['--registry', 'registry.example.com/o:v1'], /path component "o:v1"/],
    [['--registry', 'bad_host!/o'], /"bad_host!" is not a registry host/],
    [['--registry', 'r.example.com:70000/o'], /port 70000 is out of range/],
    [['--registry', 'r.example.com/o', '--tag=.x'], /--tag .x: a tag is/],
    [['--registry', 'r.example.com/o', '--only', 'injector,nginx'], /--only injector,nginx: unknown image nginx; the images are injector, rbac-syncer, cert-manager, xxl-agent/],
    [['--registry', 'r.example.com/o', '--registy', 'x'], /Unknown option '--registy'/],
    [['--registry', 'r.example.com/o', 'extra'], /positional argument/],
  ])('refuses %j naming the argument', (argv, message) => {
    expect(() => parsePushArgs(argv)).toThrow(message);
  });

  it('makes a tag of a build version with SemVer build metadata', () => {
    expect(tagOf('0.1.0+3f2a9c1d0b7e.dirty\n')).toBe('0.1.0-3f2a9c1d0b7e.dirty');
    expect(() => tagOf('')).toThrow(/pass --tag/);
  });
});

describe('the push output', () => {
  it('parses push.sh lines and refuses anything else, naming the line', () => {
    expect(parsePushed(`injector r.example.com/o/injector@${digest(1)}\n\n`)).toEqual([{ name: 'injector', repository: 'r.example.com/o/injector', digest: digest(1) }]);
    expect(() => parsePushed('injector r.example.com/o/injector@sha256:abc')).toThrow(/printed "injector r.example.com\/o\/injector@sha256:abc"/);
    expect(() => parsePushed(`nginx r.example.com/o/nginx@${digest(1)}`)).toThrow(/printed "nginx/);
  });

  it('lists every image by digest for mirroring, and writes the digests the chart is pinned from', () => {
    expect(imageList(PUSHED).split('\n').filter(Boolean)).toEqual(PUSHED.map((p) => `${p.repository}@${p.digest}`).sort());
    const values = parse(pinDigests(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8'), digestsEnv(PUSHED))) as { images: Record<string, { repository: string; digest: string }> };
    expect(values.images['rbacSyncer']).toMatchObject({ repository: 'registry.example.com:5443/team/outrigger/rbac-syncer', digest: digest(2) });
    expect(values.images['xxlAgent']).toMatchObject({ repository: 'registry.example.com:5443/team/outrigger/xxl-agent', digest: digest(4) });
  });
});

describe('pinnedOverlay, rendered by kustomize', () => {
  let kubectl: string;
  let dir: string;
  beforeAll(async () => {
    kubectl = join(await resolveBinaries(), 'kubectl');
    dir = mkdtempSync(join(tmpdir(), 'outrigger-push-'));
  }, 900_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The overlay written for `base`, then `kubectl kustomize` of it. */
  function renderPinned(base: string, pushed: readonly Pushed[]): RenderedObject[] {
    writeFileSync(join(dir, 'kustomization.yaml'), pinnedOverlay(relative(dir, join(DEPLOY_DIR, base)), render(kubectl, base), pushed));
    return parseAllDocuments(execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8' })).map((d) => d.toJS() as RenderedObject);
  }
  const images = (objects: readonly RenderedObject[]) =>
    objects.flatMap((o) => {
      const spec = o['spec'] as { template?: { spec: { containers: { image: string; imagePullPolicy?: string }[] } }; container?: { image: string; imagePullPolicy?: string } };
      return [...(spec?.template?.spec.containers ?? []), ...(o.kind === 'AgentProfile' && spec.container ? [spec.container] : [])].map((c) => `${o.kind}/${o.metadata.name} ${c.image} ${c.imagePullPolicy}`);
    });

  it('runs every service and the reference agent of the prod overlay by digest, pulled Always, and changes nothing else', () => {
    const base = render(kubectl, 'overlays/prod');
    const out = renderPinned('overlays/prod', PUSHED);
    expect(images(out).sort()).toEqual(
      [
        `Deployment/outrigger-injector ${PUSHED[0]?.repository}@${digest(1)} Always`,
        `Deployment/outrigger-rbac-syncer ${PUSHED[1]?.repository}@${digest(2)} Always`,
        `Deployment/outrigger-cert-manager ${PUSHED[2]?.repository}@${digest(3)} Always`,
        `AgentProfile/xxl-job ${PUSHED[3]?.repository}@${digest(4)} Always`,
      ].sort(),
    );
    const withoutImages = (objects: readonly RenderedObject[]) => JSON.stringify(objects).replace(/"image":"[^"]*"|"imagePullPolicy":"[^"]*"/g, '');
    expect(withoutImages(out)).toBe(withoutImages(base));
  });

  it('pins only what was pushed, and refuses a base that runs none of an image', () => {
    const services = PUSHED.slice(0, 3);
    const out = images(renderPinned('overlays/local', services));
    expect(out.filter((line) => line.includes('@sha256:'))).toHaveLength(3);
    expect(out.filter((line) => line.startsWith('AgentProfile/'))).toEqual(expect.arrayContaining([expect.stringContaining('localhost/outrigger/xxl-agent:local')]));
    expect(() => pinnedOverlay('../base/injector', render(kubectl, 'base/injector'), PUSHED)).toThrow('--base ../base/injector: nothing in it runs rbac-syncer, cert-manager, xxl-agent');
  });
});
