import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.nx/**', 'tools/kube/**'] },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    files: ['**/*.ts', '**/*.mjs'],
    rules: {
      // Who may import whom. Apps share code only through libs; the admission core stays free of
      // NestJS and of the Kubernetes client so it can run anywhere (webhook, CLI, tests).
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: true,
          allow: ['../../vitest.shared.ts', '../vitest.shared.ts'],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib', 'type:testing'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:lib', 'type:testing'] },
            { sourceTag: 'type:tooling', onlyDependOnLibsWithTags: ['type:lib', 'type:testing'] },
            // Which library serves whom: each service reaches only the libraries of its job.
            { sourceTag: 'scope:admission', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'scope:profiles', onlyDependOnLibsWithTags: ['scope:admission'] },
            { sourceTag: 'scope:injection', onlyDependOnLibsWithTags: ['scope:admission', 'scope:profiles'] },
            // Its e2e suites run a real API server (the harness) and issue client certificates.
            { sourceTag: 'scope:kube', onlyDependOnLibsWithTags: ['scope:pki', 'scope:tooling'] },
            { sourceTag: 'scope:pki', onlyDependOnLibsWithTags: [] },
            // NestJS plumbing, and the Kubernetes client every service gets from it (KubeClientModule).
            { sourceTag: 'scope:service', onlyDependOnLibsWithTags: ['scope:kube'] },
            // What each service asks of the API server: shared by the services, `outrigger check` and the RBAC tests.
            { sourceTag: 'scope:install', onlyDependOnLibsWithTags: ['scope:admission', 'scope:profiles', 'scope:kube'] },
            // The injector and the cert-manager take only the install names from scope:install (below).
            { sourceTag: 'scope:injector', onlyDependOnLibsWithTags: ['scope:admission', 'scope:profiles', 'scope:injection', 'scope:install', 'scope:kube', 'scope:pki', 'scope:service', 'scope:tooling'] },
            { sourceTag: 'scope:rbac-syncer', onlyDependOnLibsWithTags: ['scope:admission', 'scope:profiles', 'scope:injection', 'scope:install', 'scope:kube', 'scope:service', 'scope:tooling'] },
            // The operator's CLI: offline injection (the webhook's code path) and checks against a cluster.
            { sourceTag: 'scope:cli', onlyDependOnLibsWithTags: ['scope:admission', 'scope:profiles', 'scope:injection', 'scope:install', 'scope:kube', 'scope:pki', 'scope:tooling'] },
            { sourceTag: 'scope:cert-manager', onlyDependOnLibsWithTags: ['scope:admission', 'scope:install', 'scope:kube', 'scope:pki', 'scope:service', 'scope:tooling'] },
            {
              sourceTag: 'framework:none',
              onlyDependOnLibsWithTags: ['framework:none'],
              bannedExternalImports: ['@nestjs/*', '@kubernetes/client-node', 'fastify', 'express'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The control-plane harness is for tests, the demo and benchmarks; production code never loads it.
    files: ['apps/*/src/**/*.ts'],
    ignores: ['apps/*/src/**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: '@outrigger/control-plane', message: 'test tooling; not for production code' }] },
      ],
    },
  },
  {
    // libs/install's permission lists load the profile schema; these two services need only the names.
    files: ['apps/injector/src/**/*.ts', 'apps/cert-manager/src/**/*.ts'],
    ignores: ['apps/*/src/**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '@outrigger/control-plane', message: 'test tooling; not for production code' },
            { name: '@outrigger/install', message: 'import the install names from @outrigger/install/names' },
          ],
        },
      ],
    },
  },
);
