import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig, type ViteUserConfig } from 'vitest/config';

/** Every e2e run starts one real control plane (etcd + kube-apiserver) for all its suites. */
const controlPlaneSetup = fileURLToPath(new URL('./libs/control-plane/src/vitest-global-setup.ts', import.meta.url));
/** The e2e-floor runs' control plane: the oldest supported kube-apiserver (tools/kube/floor). */
const floorControlPlaneSetup = fileURLToPath(new URL('./libs/control-plane/src/vitest-floor-setup.ts', import.meta.url));
/** Every run keeps its temporary files in one directory, removed when the run passes; first, so that it is removed last. */
const scratchDirSetup = fileURLToPath(new URL('./libs/control-plane/src/vitest-scratch-dir-setup.ts', import.meta.url));

/**
 * One Vitest setup for every project. SWC compiles the tests because esbuild (Vitest's default)
 * cannot emit the decorator metadata NestJS injects by; workspace libs resolve to their sources
 * through the "development" export condition.
 */
export function projectConfig(kind: 'unit' | 'e2e', extra: ViteUserConfig['test'] = {}): ViteUserConfig {
  const { globalSetup = kind === 'e2e' ? [controlPlaneSetup] : [], ...rest } = extra;
  return defineConfig({
    plugins: [swc.vite({ module: { type: 'es6' }, jsc: { target: 'es2022' } })],
    resolve: { conditions: ['development', 'node', 'import', 'default'] },
    test: {
      include: kind === 'unit' ? ['src/**/*.spec.ts'] : ['e2e/**/*.e2e.ts'],
      ...(kind === 'e2e' ? { testTimeout: 120_000, hookTimeout: 300_000, fileParallelism: false } : {}),
      ...rest,
      globalSetup: [scratchDirSetup, ...[globalSetup].flat()],
    },
  });
}

/**
 * The e2e suites in `include` again, against the oldest Kubernetes the install supports
 * (MINIMUM_KUBERNETES): the suites whose subject an older API server could change (watches,
 * admission policies, RBAC), run by each project's `e2e-floor` target.
 */
export function floorConfig(include: readonly string[]): ViteUserConfig {
  return projectConfig('e2e', { include: [...include], globalSetup: [floorControlPlaneSetup] });
}
