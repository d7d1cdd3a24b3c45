import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { RenderedObject } from '@outrigger/control-plane';
import { RELEASE_IMAGES } from '../helm/chart.ts';

/** The images of a release: the three services and the reference profile's agent. */
export { RELEASE_IMAGES };
export type ReleaseImage = (typeof RELEASE_IMAGES)[number];

export interface PushArgs {
  /** HOST[:PORT]/PATH: every image goes to <registry>/<name>:<tag>. */
  readonly registry: string;
  readonly tag?: string;
  readonly out?: string;
  /** A directory holding the registry's CA certificate (*.crt). */
  readonly certDir?: string;
  /** The overlay the rendered install builds on (default deploy/overlays/prod). */
  readonly base: string;
  readonly images: readonly ReleaseImage[];
}

export const PUSH_USAGE = `usage: npm run images:push -- --registry HOST[:PORT]/PATH [--tag TAG] [--out DIR] [--cert-dir DIR] [--base OVERLAY] [--only NAME,...]
  --registry  where the images go, e.g. registry.example.com/outrigger (no scheme, no tag)
  --tag       the tag pushed beside the digest (default: the build's version)
  --out       where the image list, digests, overlay and Helm values go (default dist/images/<tag>)
  --cert-dir  a directory holding the registry's CA certificate (*.crt)
  --base      the Kustomize overlay the pinned install builds on (default deploy/overlays/prod)
  --only      push only these of ${RELEASE_IMAGES.join(', ')}
  credentials: a containers auth file named by REGISTRY_AUTH_FILE (buildah login --authfile FILE HOST)`;

// A registry host (name, IPv4 or [IPv6]) with an optional port, then lowercase path components.
const HOST = /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::\d{1,5})?$/;
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^\w[\w.-]{0,127}$/;

/** The command's arguments, checked; the error names the argument and what it expects. */
export function parsePushArgs(argv: readonly string[]): PushArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        registry: { type: 'string' },
        tag: { type: 'string' },
        out: { type: 'string' },
        'cert-dir': { type: 'string' },
        base: { type: 'string' },
        only: { type: 'string' },
      },
    }));
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${PUSH_USAGE}`, { cause: error });
  }
  const registry = values.registry;
  if (!registry) throw new Error(`--registry is required\n${PUSH_USAGE}`);
  if (/^[a-z]+:\/\//i.test(registry)) throw new Error(`--registry ${registry}: give HOST[:PORT]/PATH without a scheme`);
  const [host = '', ...path] = registry.split('/');
  if (!HOST.test(host)) throw new Error(`--registry ${registry}: "${host}" is not a registry host (NAME, IP or [IPv6], optionally :PORT)`);
  const port = /:(\d+)$/.exec(host)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) throw new Error(`--registry ${registry}: port ${port} is out of range`);
  const badComponent = path.find((c) => !PATH_COMPONENT.test(c));
  if (badComponent !== undefined) throw new Error(`--registry ${registry}: path component "${badComponent}" must be lowercase letters and digits, separated by '.', '_', '__' or '-' (no tag or digest)`);
  if (values.tag !== undefined && !TAG.test(values.tag)) throw new Error(`--tag ${values.tag}: a tag is letters, digits, '_', '.' and '-', not starting with '.' or '-', at most 128 characters`);
  const images = values.only === undefined ? [...RELEASE_IMAGES] : values.only.split(',').map((name) => name.trim());
  const unknown = images.filter((name) => !(RELEASE_IMAGES as readonly string[]).includes(name));
  if (unknown.length > 0 || images.length === 0) throw new Error(`--only ${values.only}: ${unknown.length > 0 ? `unknown image ${unknown.join(', ')}` : 'no image'}; the images are ${RELEASE_IMAGES.join(', ')}`);
  return { registry, tag: values.tag, out: values.out, certDir: values['cert-dir'], base: values.base ?? 'deploy/overlays/prod', images: images as ReleaseImage[] };
}

/** An OCI tag from the build's version (SemVer build metadata's '+' is not allowed in tags). */
export function tagOf(version: string): string {
  const tag = version.trim().replaceAll('+', '-');
  if (!TAG.test(tag)) throw new Error(`the build version "${version.trim()}" makes no valid tag; pass --tag`);
  return tag;
}

export interface Pushed {
  readonly name: ReleaseImage;
  readonly repository: string;
  readonly digest: string;
}

/** tools/images/push.sh's `<name> <repository>@<digest>` lines. */
export function parsePushed(stdout: string): Pushed[] {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const match = /^([\w-]+) ([^@\s]+)@(sha256:[0-9a-f]{64})$/.exec(line.trim());
      if (!match || !(RELEASE_IMAGES as readonly string[]).includes(match[1] as string)) throw new Error(`tools/images/push.sh printed "${line}", expected "<${RELEASE_IMAGES.join('|')}> <repository>@sha256:<64 hex>"`);
      return { name: match[1] as ReleaseImage, repository: match[2] as string, digest: match[3] as string };
    });
}

export const pinned = (p: Pushed) => `${p.repository}@${p.digest}`;

/** `<name>=<repository>@<digest>` per image: the release workflow's digests.env (tools/helm/pin-digests.ts reads it). */
export function digestsEnv(pushed: readonly Pushed[]): string {
  return [...pushed].sort((a, b) => a.name.localeCompare(b.name)).map((p) => `${p.name}=${pinned(p)}\n`).join('');
}

/** Every image by digest, one a line: what a mirror into another registry copies. */
export function imageList(pushed: readonly Pushed[]): string {
  return pushed.map((p) => `${pinned(p)}\n`).sort().join('');
}

/** An image reference's name: its last path segment without tag or digest. */
const imageName = (ref: string) => ref.split('@')[0]?.split('/').at(-1)?.split(':')[0];

interface Container {
  readonly name: string;
  readonly image?: string;
}

/**
 * A Kustomize overlay over `base` (a path relative to the overlay) that runs every pushed image by
 * its digest with imagePullPolicy Always: in the workloads' containers and in AgentProfiles. `objects`
 * is the base rendered; an image no object runs is an error (the base is not the one pushed for).
 */
export function pinnedOverlay(base: string, objects: readonly RenderedObject[], pushed: readonly Pushed[]): string {
  const byName = new Map(pushed.map((p) => [p.name as string, p]));
  const used = new Set<string>();
  const patches = objects.flatMap((o) => {
    const ops: object[] = [];
    const pin = (path: string, image: string | undefined) => {
      const p = image === undefined ? undefined : byName.get(imageName(image) ?? '');
      if (!p) return;
      used.add(p.name);
      ops.push({ op: 'replace', path: `${path}/image`, value: pinned(p) }, { op: 'add', path: `${path}/imagePullPolicy`, value: 'Always' });
    };
    const spec = o['spec'] as { template?: { spec?: { containers?: Container[]; initContainers?: Container[] } }; container?: { image?: string } } | undefined;
    if (o.kind === 'AgentProfile') pin('/spec/container', spec?.container?.image);
    for (const field of ['initContainers', 'containers'] as const) {
      spec?.template?.spec?.[field]?.forEach((c, i) => pin(`/spec/template/spec/${field}/${i}`, c.image));
    }
    if (ops.length === 0) return [];
    const target = { kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) };
    return [{ target, patch: stringify(ops).trimEnd() }];
  });
  const unused = pushed.filter((p) => !used.has(p.name)).map((p) => p.name);
  if (unused.length > 0) throw new Error(`--base ${base}: nothing in it runs ${unused.join(', ')}`);
  return `# Generated by tools/images/push.ts: ${base} with every pushed image pinned to its digest.\n${stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: [base], patches })}`;
}
