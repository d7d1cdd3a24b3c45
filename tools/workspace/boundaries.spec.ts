import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';

// Lints snippets as if they were files of each project, through the workspace's real ESLint config.
const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function lintErrors(rules: readonly string[], filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}${filePath}` });
  return result.messages.filter((m) => m.ruleId !== null && rules.includes(m.ruleId)).map((m) => m.message);
}
const boundaryErrors = (filePath: string, code: string) => lintErrors(['@nx/enforce-module-boundaries', 'no-restricted-imports'], filePath, code);

describe('module boundaries', () => {
  it('stop an app importing another app', async () => {
    const errors = await boundaryErrors('apps/injector/src/x.ts', "import '@outrigger/rbac-syncer';\n");
    expect(errors.join('\n')).toMatch(/Imports of apps are forbidden/);
  });

  it('keep NestJS and the Kubernetes client out of libs/admission', async () => {
    expect((await boundaryErrors('libs/admission/src/x.ts', "import { Injectable } from '@nestjs/common';\nexport const x = Injectable;\n")).join('\n')).toMatch(/@nestjs\/common/);
    expect((await boundaryErrors('libs/admission/src/x.ts', "import { KubeConfig } from '@kubernetes/client-node';\nexport const x = KubeConfig;\n")).join('\n')).toMatch(/@kubernetes\/client-node/);
  });

  it('stop a lib importing an app', async () => {
    expect(await boundaryErrors('libs/kube/src/x.ts', "import '@outrigger/injector';\n")).not.toEqual([]);
  });

  it('keep the test harness out of production code', async () => {
    expect((await boundaryErrors('apps/injector/src/x.ts', "import '@outrigger/control-plane';\n")).join('\n')).toMatch(/test tooling/);
  });

  it('allow an app to use a shared lib', async () => {
    expect(await boundaryErrors('apps/injector/src/x.ts', "import { issueCertificate } from '@outrigger/pki';\nexport const x = issueCertificate;\n")).toEqual([]);
  });

  it('keep each service to the libraries of its job, and the admission libraries layered', async () => {
    const forbidden = [
      ['apps/cert-manager/src/x.ts', '@outrigger/agent-profiles'],
      ['apps/cert-manager/src/x.ts', '@outrigger/sidecar'],
      ['apps/rbac-syncer/src/x.ts', '@outrigger/pki'],
      ['libs/admission/src/x.ts', '@outrigger/agent-profiles'],
      ['libs/admission/src/x.ts', '@outrigger/sidecar'],
      ['libs/agent-profiles/src/x.ts', '@outrigger/sidecar'],
      ['libs/agent-profiles/src/x.ts', '@outrigger/kube'],
      ['libs/sidecar/src/x.ts', '@outrigger/kube'],
      ['apps/cli/src/x.ts', '@outrigger/service'],
    ] as const;
    for (const [file, lib] of forbidden) {
      expect((await boundaryErrors(file, `import * as x from '${lib}';\nexport const y = x;\n`)).join('\n'), `${file} → ${lib}`).toMatch(/can only depend on libs tagged with|cannot depend on any libs|Circular dependency/);
    }
    const allowed = [
      ['apps/rbac-syncer/src/x.ts', '@outrigger/sidecar'],
      ['apps/injector/src/x.ts', '@outrigger/agent-profiles'],
      ['libs/sidecar/src/x.ts', '@outrigger/agent-profiles'],
      ['libs/agent-profiles/src/x.ts', '@outrigger/admission'],
      ['apps/cli/src/x.ts', '@outrigger/sidecar'],
      ['apps/cli/src/x.ts', '@outrigger/kube'],
      ['apps/cert-manager/src/x.ts', '@outrigger/install/names'],
      ['apps/injector/src/x.ts', '@outrigger/install/names'],
      ['libs/service/src/x.ts', '@outrigger/kube'],
    ] as const;
    for (const [file, lib] of allowed) expect(await boundaryErrors(file, `import * as x from '${lib}';\nexport const y = x;\n`), `${file} → ${lib}`).toEqual([]);
  });

  it('give the cert-manager and the injector only the install names of libs/install, not its permission lists', async () => {
    for (const file of ['apps/cert-manager/src/x.ts', 'apps/injector/src/x.ts']) {
      expect((await boundaryErrors(file, "import * as x from '@outrigger/install';\nexport const y = x;\n")).join('\n'), file).toMatch(/@outrigger\/install\/names/);
    }
  });
});
