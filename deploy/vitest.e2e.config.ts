import { projectConfig } from '../vitest.shared.ts';

export default projectConfig('e2e', { include: ['tests/**/*.e2e.ts'] });
