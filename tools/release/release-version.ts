import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import semver from 'semver';
import { parse as parseYaml } from 'yaml';

/**
 * The release version, spelled once in the workspace's package.json. Every other spelling (the
 * workspaces' package.json and lock entries, the image tags of deploy/, the reference profile's agent
 * image) must equal it: a spec holds them so, and `planRelease` rewrites them all at once. The chart
 * takes it from the source when generated.
 */
export const RELEASE_SOURCE = 'package.json';

/** One place a release version is written: the file, the field, and what it says there. */
export interface Spelling {
  readonly file: string;
  readonly field: string;
  readonly version: string;
}

/** A release file's text, by its path relative to the workspace root. */
export type ReleaseFiles = ReadonlyMap<string, string>;

type Doc = Record<string, unknown>;
/** A field of a parsed file that spells the version, with a setter on that parsed file. */
interface Field {
  readonly field: string;
  readonly version: string;
  set(doc: Doc, version: string): void;
}
interface Format {
  parse(text: string): Doc;
  fields(doc: Doc): Field[];
  /** The text with every field's version replaced; the caller checks it parses to the set document. */
  rewrite(text: string, version: string, doc: Doc): string;
}

const OUR_IMAGE = /^ghcr\.io\/outrigger\/[^:@]+$/;

const packageJson: Format = {
  parse: (text) => JSON.parse(text) as Doc,
  fields: (doc) => (typeof doc['version'] === 'string' ? [{ field: 'version', version: doc['version'], set: (d, v) => void (d['version'] = v) }] : []),
  rewrite: (_text, version, doc) => json(setAll(packageJson, doc, version)),
};

const packageLock: Format = {
  parse: (text) => JSON.parse(text) as Doc,
  fields: (doc) => {
    const packages = doc['packages'] as Record<string, Doc>;
    const workspaces = Object.keys(packages).filter((k) => !k.includes('node_modules') && typeof packages[k]?.['version'] === 'string');
    return [
      ...packageJson.fields(doc),
      ...workspaces.map((k) => ({ field: `packages["${k}"].version`, version: packages[k]?.['version'] as string, set: (d: Doc, v: string) => setField((d['packages'] as Record<string, Doc>)[k], 'version', v) })),
    ];
  },
  rewrite: (_text, version, doc) => json(setAll(packageLock, doc, version)),
};

/** A Kustomization's `images[]` of ours whose `newTag` is a version (overlays for local builds tag `dev` or `local`). */
const kustomization: Format = {
  parse: (text) => parseYaml(text) as Doc,
  fields: (doc) =>
    ((doc['images'] as Doc[] | undefined) ?? []).flatMap((image, i) => {
      const name = String(image['newName'] ?? image['name']);
      const tag = image['newTag'];
      return OUR_IMAGE.test(name) && typeof tag === 'string' && semver.valid(tag) ? [{ field: `images[${name}].newTag`, version: tag, set: (d: Doc, v: string) => setField((d['images'] as Doc[])[i], 'newTag', v) }] : [];
    }),
  rewrite: (text, version) => text.replace(/^(\s*newTag:\s*)(\S+)[ \t]*$/gm, (line: string, key: string, tag: string) => (semver.valid(tag) ? `${key}${version}` : line)),
};

/** An AgentProfile's agent image, where it is one of ours with a version tag. */
const profile: Format = {
  parse: (text) => parseYaml(text) as Doc,
  fields: (doc) => {
    const container = (doc['spec'] as Doc | undefined)?.['container'] as Doc | undefined;
    const [repository, tag] = String(container?.['image'] ?? '').split(':');
    return repository && OUR_IMAGE.test(repository) && tag && semver.valid(tag)
      ? [{ field: 'spec.container.image', version: tag, set: (d: Doc, v: string) => void (((d['spec'] as Doc)['container'] as Doc)['image'] = `${repository}:${v}`) }]
      : [];
  },
  rewrite: (text, version) => text.replace(/^(\s*image:\s*ghcr\.io\/outrigger\/[^:\s]+:)(\S+)[ \t]*$/gm, (line: string, key: string, tag: string) => (semver.valid(tag) ? `${key}${version}` : line)),
};

function setField(doc: Doc | undefined, field: string, value: string): void {
  if (doc) doc[field] = value;
}

function json(doc: Doc): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

function setAll(format: Format, doc: Doc, version: string): Doc {
  const copy = structuredClone(doc);
  for (const f of format.fields(copy)) f.set(copy, version);
  return copy;
}

function formatOf(file: string): Format {
  if (file === 'package-lock.json') return packageLock;
  if (file.endsWith('package.json')) return packageJson;
  if (file.endsWith('kustomization.yaml')) return kustomization;
  return profile;
}

/** The files that may spell the release version, relative to `root`. */
export function releaseFilePaths(root: string): string[] {
  const inDir = (dir: string, pick: (entry: string) => string | undefined) =>
    readdirSync(join(root, dir))
      .sort()
      .flatMap((entry) => {
        const path = pick(`${dir}/${entry}`);
        return path && existsSync(join(root, path)) ? [path] : [];
      });
  return [
    RELEASE_SOURCE,
    'package-lock.json',
    ...['apps', 'libs'].flatMap((dir) => inDir(dir, (d) => `${d}/package.json`)),
    ...['deploy/base', 'deploy/overlays'].flatMap((dir) => inDir(dir, (d) => `${d}/kustomization.yaml`)),
    ...inDir('deploy/base/profiles', (p) => (p.endsWith('.yaml') && !p.endsWith('kustomization.yaml') ? p : undefined)),
  ];
}

export function readReleaseFiles(root: string): ReleaseFiles {
  return new Map(releaseFilePaths(root).map((path) => [path, readFileSync(join(root, path), 'utf8')]));
}

/** Every spelling of a release version in `files`. */
export function spellings(files: ReleaseFiles): Spelling[] {
  return [...files].flatMap(([file, text]) => {
    const format = formatOf(file);
    return format.fields(format.parse(text)).map(({ field, version }) => ({ file, field, version }));
  });
}

/** The release version: the source's. */
export function readReleaseVersion(root: string): string {
  const version = (JSON.parse(readFileSync(join(root, RELEASE_SOURCE), 'utf8')) as Doc)['version'];
  if (typeof version !== 'string') throw new Error(`${join(root, RELEASE_SOURCE)} has no "version": it holds the release version`);
  return version;
}

/** Why `version` cannot be a release version, or undefined when it can. */
export function releaseVersionProblem(version: string): string | undefined {
  const parsed = semver.parse(version);
  if (parsed && parsed.build.length > 0) return `"${version}" carries build metadata (+${parsed.build.join('.')}), which an image tag cannot hold`;
  if (!parsed || parsed.version !== version) return `"${version}" is not a SemVer version such as 1.2.0 or 1.2.0-rc.1 (no leading v)`;
  return undefined;
}

/**
 * The files' new texts with every spelling set to `version`: only the files that change. Throws,
 * naming the file, where a rewrite would change more than its versions.
 */
export function planRelease(files: ReleaseFiles, version: string): Map<string, string> {
  const problem = releaseVersionProblem(version);
  if (problem) throw new Error(problem);
  const changed = new Map<string, string>();
  for (const [file, text] of files) {
    const format = formatOf(file);
    const doc = format.parse(text);
    if (format.fields(doc).every((f) => f.version === version)) continue;
    const rewritten = format.rewrite(text, version, doc);
    if (!isDeepStrictEqual(format.parse(rewritten), setAll(format, doc, version))) throw new Error(`${file}: cannot set the version without changing more; set it by hand`);
    changed.set(file, rewritten);
  }
  return changed;
}
