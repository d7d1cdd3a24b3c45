import { floorConfig } from '../../vitest.shared.ts';

export default floorConfig(['e2e/rbac-syncer.e2e.ts', 'e2e/tenant-attacks.e2e.ts', 'e2e/revocation.e2e.ts', 'e2e/role-bindings.e2e.ts', 'e2e/least-privilege.e2e.ts']);
