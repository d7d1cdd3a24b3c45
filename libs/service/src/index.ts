export * from './bootstrap.js';
export * from './duration.js';
export * from './env.js';
export * from './health.controller.js';
export { HealthModule } from './health.module.js';
export type { HealthModuleOptions } from './health.module-definition.js';
export * from './logging.js';
export * from './metrics.module.js';
export * from './metrics.registry.js';
