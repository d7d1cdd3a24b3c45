import type { TestProject } from 'vitest/node';
import { type ControlPlaneOptions, startControlPlane } from './control-plane.js';

export interface ProvidedControlPlane {
  readonly version: string;
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly binDir: string;
  readonly dir: string;
  /** CA of the client certificate the API server presents to webhooks (mutual TLS). */
  readonly webhookClientCaFile: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    controlPlane: ProvidedControlPlane;
  }
}

/** Vitest globalSetup: one real control plane per test run, handed to tests via `inject('controlPlane')`. */
export default function setup(project: TestProject): Promise<() => Promise<void>> {
  return provideControlPlane(project);
}

/** Starts the run's control plane and provides it to the tests; resolves with its stop. */
export async function provideControlPlane(project: TestProject, options: Pick<ControlPlaneOptions, 'kubeApiServer'> = {}): Promise<() => Promise<void>> {
  const cp = await startControlPlane({ ...options, keepDir: process.env.OUTRIGGER_KEEP_CONTROL_PLANE === '1' });
  project.provide('controlPlane', { version: cp.version, server: cp.server, kubeconfigPath: cp.kubeconfigPath, binDir: cp.binDir, dir: cp.dir, webhookClientCaFile: cp.webhookClientCaFile });
  return () => cp.stop();
}
