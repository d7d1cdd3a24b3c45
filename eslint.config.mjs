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
    // The injector's per-request path. In optimized code V8 11.3 (Node 20) gives every object made by
    // a literal that starts with a spread and goes on ({ ...a, b }, { ...a, ...b }) a hidden class of
    // its own, allocated in old space (~280 bytes with its descriptors) that only a major GC frees.
    // Three such literals made half the injector's promoted garbage at 1000 req/s.
    files: ['libs/admission/src/**/*.ts', 'apps/injector/src/**/*.ts'],
    ignores: ['**/*.spec.ts', 'libs/admission/src/testing/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ObjectExpression > SpreadElement:first-child ~ *',
          message:
            'an object literal that starts with a spread and goes on makes a new hidden class per object in V8 (old-space garbage on every request): use Object.assign({}, a, b), start the literal with a plain member, or assign members',
        },
      ],
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
);
