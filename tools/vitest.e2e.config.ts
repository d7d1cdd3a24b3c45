import { projectConfig } from '../vitest.shared.ts';

export default projectConfig('e2e', { include: ['**/*.e2e.ts'], exclude: ['**/node_modules/**', 'kube/**'] });
