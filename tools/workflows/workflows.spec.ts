import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot, resolveToolDir } from '@outrigger/control-plane';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { actionFindings, readActionRuntimes, WORKFLOWS_DIR, workflowFiles, workflowSteps } from './action-runtimes.ts';

const FIXTURE = fileURLToPath(new URL('fixtures/node20-actions.yml', import.meta.url));
const table = readActionRuntimes();
const today = new Date().toISOString().slice(0, 10);
let actionlint: string;

beforeAll(async () => {
  actionlint = join(await resolveToolDir('OUTRIGGER_ACTIONLINT_BIN', 'tools/workflows/actionlint/build.sh', ['actionlint']), 'actionlint');
}, 600_000);

describe('GitHub workflows', () => {
  it('actionlint (built from its Go module) finds nothing in any workflow', () => {
    const files = workflowFiles();
    expect(files.length).toBeGreaterThan(0);
    const result = spawnSync(actionlint, ['-no-color', ...files], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('actionlint fails on a broken workflow (it reads what it is given)', () => {
    const broken = 'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n';
    const result = spawnSync(actionlint, ['-no-color', '-'], { encoding: 'utf8', input: broken });
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('nope');
  });

  it.each(workflowFiles().map((f) => [f.split('/').at(-1), f]))('%s uses only actions in the runtime table, none on an end-of-life Node', (_name, file) => {
    expect(actionFindings(file as string, table, today)).toEqual([]);
  });

  it('names each action on an end-of-life Node and each action missing from the table, and skips local and container actions', () => {
    expect(actionFindings(FIXTURE, table, '2026-11-25')).toEqual([
      `${FIXTURE}: job build, step 1: actions/checkout@v4 runs on node20, past its end of life (2026-04-30)`,
      `${FIXTURE}: job build, step 3: actions/cache@v4 runs on node20, past its end of life (2026-04-30)`,
      `${FIXTURE}: job build, step 4: someone/unlisted-action@v1 is not in tools/workflows/action-runtimes.yaml (add it with its action.yml's runs.using, or use a major that is)`,
    ]);
    // Before Node 20's end of life, its actions were fine.
    expect(actionFindings(FIXTURE, table, '2026-04-29')).toHaveLength(1);
  });

  it('the release workflow installs the cosign and syft releases tools/signing builds for the local signing test', () => {
    const moduleVersion = (tool: string, module: string) => new RegExp(`^\\t${module.replaceAll('.', '\\.')} (v\\S+)`, 'm').exec(readFileSync(join(repoRoot(), 'tools', 'signing', tool, 'go.mod'), 'utf8'))?.[1];
    const inputs = (action: string, input: string) => workflowSteps(join(WORKFLOWS_DIR, 'images.yml')).filter((s) => s.uses?.startsWith(`${action}@`)).map((s) => s.with?.[input]);
    expect(moduleVersion('cosign', 'github.com/sigstore/cosign/v3')).toMatch(/^v3\./);
    expect(inputs('sigstore/cosign-installer', 'cosign-release')).toEqual([moduleVersion('cosign', 'github.com/sigstore/cosign/v3')]);
    expect(inputs('anchore/sbom-action', 'syft-version')).toEqual([moduleVersion('syft', 'github.com/anchore/syft')]);
  });

  it('every job that builds what a release publishes first refuses a tag the repository does not spell (tools/release/check-tag.sh)', () => {
    const jobs = (file: string) => (parse(readFileSync(join(WORKFLOWS_DIR, file), 'utf8')) as { jobs: Record<string, { steps: { run?: string; uses?: string }[] }> }).jobs;
    const checkFirst = (steps: { run?: string; uses?: string }[]) => steps.findIndex((s) => s.run?.includes('tools/release/check-tag.sh "$GITHUB_REF_NAME"')) === 1 && steps[0]?.uses?.startsWith('actions/checkout@');
    expect(checkFirst(jobs('images.yml')['image']?.steps ?? [])).toBe(true);
    expect(checkFirst(jobs('images.yml')['xxl-agent']?.steps ?? [])).toBe(true);
    expect(checkFirst(jobs('cli.yml')['standalone']?.steps ?? [])).toBe(true);
  });

  it("a release's images carry its version: the services' VERSION build argument, the agent's main.version", () => {
    const steps = workflowSteps(join(WORKFLOWS_DIR, 'images.yml')) as { uses?: string; run?: string; env?: Record<string, string>; with?: Record<string, string> }[];
    const serviceBuild = steps.find((s) => s.uses?.startsWith('docker/build-push-action@') && s.with?.['build-args']?.includes('APP='));
    expect(serviceBuild?.with?.['build-args']).toContain("VERSION=${{ env.RELEASE == 'true' && env.VERSION || '' }}");
    const agentBuild = steps.find((s) => s.run?.includes('-X main.version='));
    expect(agentBuild?.run).toContain('-X main.version=$AGENT_VERSION');
    expect(agentBuild?.env?.['AGENT_VERSION']).toBe("${{ env.RELEASE == 'true' && env.VERSION || 'dev' }}");
  });

  it('the table refuses a runtime it does not know', () => {
    expect(() => readActionRuntimes(fileURLToPath(new URL('fixtures/unknown-runtime.yaml', import.meta.url)))).toThrow(/using/);
  });
});

