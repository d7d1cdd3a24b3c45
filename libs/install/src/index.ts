export * from './service-permissions.js';
export * from './exec-guard.js';
