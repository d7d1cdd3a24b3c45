import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readServiceVersion, serviceVersion } from './service-version.js';

describe('serviceVersion', () => {
  it("is the build's version when the image build wrote one", () => {
    expect(serviceVersion('1.2.0\n', '0.1.0')).toBe('1.2.0');
    expect(serviceVersion('0.1.0+3f2a9c1d0b7e.dirty\n', '0.1.0')).toBe('0.1.0+3f2a9c1d0b7e.dirty');
  });

  it('is the package version marked +dev otherwise, never a bare release number', () => {
    expect(serviceVersion(undefined, '0.1.0')).toBe('0.1.0+dev');
    expect(serviceVersion('\n', '0.1.0')).toBe('0.1.0+dev');
    expect(serviceVersion(undefined, undefined)).toBe('unknown+dev');
  });
});

describe('readServiceVersion', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const workspace = (files: Record<string, string>) => {
    const root = mkdtempSync(join(tmpdir(), 'service-version-'));
    dirs.push(root);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return (path: string) => pathToFileURL(join(root, path)).href;
  };

  it('reads the source tree: apps/<app>/package.json, +dev', () => {
    const at = workspace({ 'apps/rbac-syncer/package.json': '{"version":"0.3.0"}' });
    expect(readServiceVersion(at('apps/rbac-syncer/src/config/version.ts'), 'rbac-syncer')).toBe('0.3.0+dev');
  });

  it('reads a build: the VERSION the image build wrote beside main.js, before the package version', () => {
    const at = workspace({ 'apps/cert-manager/package.json': '{"version":"0.3.0"}', 'dist/apps/cert-manager/VERSION': '0.3.0+abcdef012345\n' });
    expect(readServiceVersion(at('dist/apps/cert-manager/config/version.js'), 'cert-manager')).toBe('0.3.0+abcdef012345');
  });

  it("reads a build without VERSION (nx build, no image): the app's package version, +dev", () => {
    const at = workspace({ 'apps/injector/package.json': '{"version":"0.3.0"}' });
    expect(readServiceVersion(at('dist/apps/injector/config/version.js'), 'injector')).toBe('0.3.0+dev');
  });
});
