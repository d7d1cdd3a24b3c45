export * from './bootstrap.js';
export * from './duration.js';
export * from './env.js';
export * from './health.controller.js';
export * from './logging.js';
export * from './metrics.module.js';
export * from './metrics.registry.js';
