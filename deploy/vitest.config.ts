import { projectConfig } from '../vitest.shared.ts';

// These specs run kustomize as a process: on a loaded machine one takes longer than Vitest's default.
export default projectConfig('unit', { include: ['tests/**/*.spec.ts'], testTimeout: 60_000 });
