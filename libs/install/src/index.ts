export * from './install-names.js';
export * from './install-files.js';
export * from './service-permissions.js';
export * from './exec-guard.js';
export * from './syncer-confinement.js';
export * from './synced-rbac.js';
export * from './rbac-rules.js';
export * from './forged-agent-policy.js';
