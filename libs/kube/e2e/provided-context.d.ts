import 'vitest';

// What the control-plane global setup provides (see libs/control-plane/src/vitest-global-setup.ts).
// That package does not export its ProvidedContext augmentation, so suites outside it declare it.
declare module 'vitest' {
  export interface ProvidedContext {
    controlPlane: {
      readonly version: string;
      readonly server: string;
      readonly kubeconfigPath: string;
      readonly binDir: string;
      readonly dir: string;
    };
  }
}
