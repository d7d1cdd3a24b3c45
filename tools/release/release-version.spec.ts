import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '@outrigger/control-plane';
import { planRelease, readReleaseFiles, readReleaseVersion, releaseVersionProblem, spellings } from './release-version.ts';

const root = repoRoot();
const files = readReleaseFiles(root);
const version = readReleaseVersion(root);
const text = (file: string, from: ReadonlyMap<string, string> = files) => from.get(file) ?? '';

describe('the release version', () => {
  it('is spelled alike everywhere: the workspaces, their lock entries, the image tags of deploy/ and the reference agent', () => {
    const all = spellings(files);
    expect(all.filter((s) => s.version !== version)).toEqual([]);
    // Each kind of place is found, so a spelling that moved cannot drop out of this check unseen.
    const where = (file: string) => all.filter((s) => s.file === file).map((s) => s.field);
    expect(where('apps/cli/package.json')).toEqual(['version']);
    expect(where('package-lock.json')).toEqual(expect.arrayContaining(['version', 'packages[""].version', 'packages["apps/injector"].version', 'packages["libs/install"].version']));
    expect(where('deploy/overlays/prod/kustomization.yaml')).toEqual(['images[ghcr.io/outrigger/injector].newTag', 'images[ghcr.io/outrigger/rbac-syncer].newTag', 'images[ghcr.io/outrigger/cert-manager].newTag']);
    expect(where('deploy/base/injector/kustomization.yaml')).toEqual(['images[ghcr.io/outrigger/injector].newTag']);
    expect(where('deploy/base/profiles/xxl-job.yaml')).toEqual(['spec.container.image']);
    expect(where('deploy/overlays/local/kustomization.yaml')).toEqual([]);
  });

  it('is set everywhere at once, changing nothing else', () => {
    const changed = planRelease(files, '2.3.0-rc.1');
    const after = new Map([...files, ...changed]);
    expect(spellings(after).every((s) => s.version === '2.3.0-rc.1')).toBe(true);
    expect(spellings(after)).toHaveLength(spellings(files).length);
    // Only the version lines differ: a line-by-line comparison of each rewritten YAML file.
    for (const [file, rewritten] of changed) {
      const before = text(file).split('\n');
      const differing = rewritten.split('\n').filter((line, i) => line !== before[i]);
      expect(differing.every((line) => line.includes('2.3.0-rc.1')), file).toBe(true);
    }
    expect(changed.has('deploy/overlays/local/kustomization.yaml')).toBe(false);
    expect((parseYaml(text('deploy/base/profiles/xxl-job.yaml', changed)) as { spec: { container: { image: string } } }).spec.container.image).toBe('ghcr.io/outrigger/xxl-agent:2.3.0-rc.1');
    expect(planRelease(after, '2.3.0-rc.1').size).toBe(0);
  });

  it('mends a spelling that went its own way', () => {
    const drifted = new Map(files).set('apps/cli/package.json', text('apps/cli/package.json').replace(`"version": "${version}"`, '"version": "0.0.9"'));
    expect(spellings(drifted).filter((s) => s.version !== version)).toEqual([{ file: 'apps/cli/package.json', field: 'version', version: '0.0.9' }]);
    expect([...planRelease(drifted, version).keys()]).toEqual(['apps/cli/package.json']);
  });

  it.each([
    ['v1.2.0', 'not a SemVer version'],
    ['1.2', 'not a SemVer version'],
    [' 1.2.0', 'not a SemVer version'],
    ['1.2.0+abc', 'build metadata (+abc)'],
  ])('refuses %j as a release version, saying why', (bad, why) => {
    expect(releaseVersionProblem(bad)).toContain(why);
    expect(() => planRelease(files, bad)).toThrow(why);
  });

  it('refuses a rewrite that would change more than the version, naming the file', () => {
    const odd = new Map([['deploy/base/injector/kustomization.yaml', 'images:\n  - name: outrigger/injector\n    newName: ghcr.io/outrigger/injector\n    newTag: "0.1.0"\n']]);
    expect(() => planRelease(odd, '1.0.0')).toThrow('deploy/base/injector/kustomization.yaml: cannot set the version');
  });
});

describe('npm run release:version', () => {
  it('refuses a bad version before writing anything, naming it', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--conditions', 'development', 'tools/release/set-release-version.ts', 'v9.0.0'], { cwd: root, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('"v9.0.0" is not a SemVer version');
    expect(readReleaseFiles(root)).toEqual(files);
  });
});

describe('tools/release/check-tag.sh (the release workflows refuse a tag the repository does not spell)', () => {
  it('passes the tag of this version', () => {
    expect(execFileSync('bash', ['tools/release/check-tag.sh', `v${version}`], { cwd: root, encoding: 'utf8' })).toContain(`is release ${version}`);
  });

  it('fails another tag, naming the version and the command that sets it', () => {
    const run = spawnSync('bash', ['tools/release/check-tag.sh', 'v9.9.9'], { cwd: root, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`tag v9.9.9 is not this commit's release version (${version}, package.json)`);
    expect(run.stderr).toContain('npm run release:version -- 9.9.9');
  });
});
