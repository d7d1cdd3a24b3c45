import { projectConfig } from '../vitest.shared.ts';

// These specs run ESLint, promtool and kustomize as processes: on a loaded machine one takes longer than Vitest's default.
export default projectConfig('unit', { include: ['**/*.spec.ts'], exclude: ['**/node_modules/**'], testTimeout: 60_000 });
