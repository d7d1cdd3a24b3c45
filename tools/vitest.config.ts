import { projectConfig } from '../vitest.shared.ts';

export default projectConfig('unit', { include: ['**/*.spec.ts'], exclude: ['**/node_modules/**'] });
