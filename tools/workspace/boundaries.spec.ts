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
});

