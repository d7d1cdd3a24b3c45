import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@outrigger/control-plane';
import { describe, expect, it } from 'vitest';

/**
 * The one Dockerfile against the workspace: it copies every workspace package.json before npm ci,
 * builds the three services once, and gives each image only production dependencies, the built libs
 * the services import and that service's own build output. The real-cluster suite (e2e/cluster)
 * builds it with buildah and runs the images; this checks what it copies, fast.
 */
const root = repoRoot();
const APPS = ['injector', 'rbac-syncer', 'cert-manager'] as const;
const LIBS = readdirSync(join(root, 'libs'));
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

function importedLibs(dir: string): Set<string> {
  const found = new Set<string>();
  for (const file of sources(dir)) {
    for (const match of readFileSync(file, 'utf8').matchAll(/from '@outrigger\/([a-z-]+)(\/[a-z-]+)?'/g)) found.add(match[1] ?? '');
  }
  return found;
}

/** The libs an app's production code loads, following the libs' own imports. */
function runtimeLibs(app: string): string[] {
  const seen = new Set<string>();
  const queue = [...importedLibs(join(root, 'apps', app, 'src'))];
  while (queue.length > 0) {
    const lib = queue.pop() ?? '';
    if (seen.has(lib)) continue;
    seen.add(lib);
    queue.push(...importedLibs(join(root, 'libs', lib, 'src')));
  }
  return [...seen];
}

describe('Dockerfile', () => {
  it('takes the Node image as a build argument, defaulting to the project Node version (.nvmrc)', () => {
    const nodeVersion = readFileSync(join(root, '.nvmrc'), 'utf8').trim();
    expect(dockerfile).toMatch(new RegExp(`^ARG NODE_IMAGE=node:${nodeVersion.replace(/\./g, '\\.')}-bookworm-slim$`, 'm'));
    expect(dockerfile.match(/^FROM \$\{NODE_IMAGE\} AS (build|runtime)$/gm)).toHaveLength(2);
  });

  it('copies every workspace package.json before npm ci, and reads an extra CA only as a build secret', () => {
    for (const dir of [...APPS.map((a) => `apps/${a}`), ...LIBS.map((l) => `libs/${l}`)]) {
      expect(dockerfile).toContain(`COPY ${dir}/package.json ${dir}/`);
    }
    expect(dockerfile).toMatch(/RUN --mount=type=secret,id=extra-ca .*\\\n.*NODE_EXTRA_CA_CERTS=\/run\/secrets\/extra-ca.*\\\n\s+npm ci /);
    expect(dockerfile).not.toMatch(/^(ENV|ARG) .*CA_CERTS/m);
  });

  it('builds the three services and the CLI once and prunes to production dependencies', () => {
    expect(dockerfile).toContain(`RUN npx nx run-many -t build -p ${[...APPS, 'cli'].join(',')} `);
    expect(dockerfile).toMatch(/&& npm prune --omit=dev /);
  });

  it('copies exactly the built libs the services and the CLI import, never the test harness', () => {
    const copied = [...dockerfile.matchAll(/^COPY --from=build \/src\/libs\/([a-z-]+)\/dist \/app\/libs\/\1\/dist$/gm)].map((m) => m[1]).sort();
    expect(copied).toEqual([...new Set([...APPS, 'cli'].flatMap(runtimeLibs))].sort());
    expect(copied).not.toContain('control-plane');
    for (const lib of copied) expect(dockerfile).toContain(`COPY --from=build /src/libs/${lib}/package.json /app/libs/${lib}/`);
  });

  it("gives every image the CLI's build and its package.json at /app/apps/cli, where the Helm chart's test runs `outrigger check`", () => {
    expect(dockerfile).toContain('COPY --from=build /src/apps/cli/package.json /app/apps/cli/');
    expect(dockerfile).toContain('COPY --from=build /src/apps/cli/dist /app/apps/cli/dist');
  });

  it("runs the chosen service's build output as a non-root user", () => {
    expect(dockerfile).toContain('COPY --from=build /src/dist/apps/${APP} /app/dist/apps/${APP}');
    expect(dockerfile).toContain('WORKDIR /app/dist/apps/${APP}');
    expect(dockerfile).toMatch(/^USER [1-9][0-9]*:[1-9][0-9]*$/m);
    expect(dockerfile).toContain('CMD ["node", "main.js"]');
    expect(dockerfile).toMatch(/^STOPSIGNAL SIGTERM$/m);
  });

  it('writes the VERSION argument beside each service\'s main.js in the build stage, after the build', () => {
    const build = dockerfile.slice(dockerfile.indexOf('AS build'), dockerfile.indexOf('AS runtime'));
    expect(build.indexOf('ARG VERSION')).toBeGreaterThan(build.indexOf('RUN npx nx run-many -t build'));
    for (const app of APPS) expect(build).toContain(app);
    expect(build).toMatch(/printf '%s\\n' "\$VERSION" > "dist\/apps\/\$app\/VERSION"/);
  });

  it('runs nothing in the runtime stage: it only copies what the build stage made', () => {
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    expect(runtime).not.toMatch(/^RUN /m);
  });
});

describe('tools/images Dockerfiles', () => {
  const read = (name: string) => readFileSync(join(root, 'tools/images', `${name}.Dockerfile`), 'utf8');

  it('puts each static program alone in a scratch image', () => {
    expect(read('pause')).toMatch(/^FROM scratch$[\s\S]*^ENTRYPOINT \["\/pause"\]$/m);
    const agent = read('stand-in-agent');
    expect(agent).toMatch(/^FROM scratch$/m);
    expect(agent).toMatch(/^USER 65532:65532$/m);
    expect(agent).toMatch(/^EXPOSE 9999$/m);
    expect(agent).toMatch(/^ENTRYPOINT \["\/stand-in-agent"\]$/m);
  });
});
