import type { TestProject } from 'vitest/node';
import { floorApiServer } from './binaries.js';
import { provideControlPlane } from './vitest-global-setup.js';

/** Vitest globalSetup of the `e2e-floor` targets: the suites' control plane runs the oldest supported kube-apiserver (tools/kube/floor). */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  return provideControlPlane(project, { kubeApiServer: await floorApiServer() });
}
