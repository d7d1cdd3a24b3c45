import { floorConfig } from '../../vitest.shared.ts';

export default floorConfig(['e2e/webhook.e2e.ts', 'e2e/match-conditions.e2e.ts', 'e2e/verify-injected-agent.e2e.ts', 'e2e/agent-confinement.e2e.ts', 'e2e/opt-in-missing.e2e.ts']);
