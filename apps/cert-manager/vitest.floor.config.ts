import { floorConfig } from '../../vitest.shared.ts';

export default floorConfig(['e2e/cert-manager.e2e.ts', 'e2e/confinement.e2e.ts']);
