export * from './rotation-config.js';
export * from './secret-layout.js';
export * from './observed-secrets.js';
export * from './observed-webhooks.js';
export * from './observed-state.js';
export * from './rotation-plan.js';
export { planRotation } from './rotation-planner.js';
export * from './readiness.js';
export * from './metrics-snapshot.js';
