export * from './cluster.js';
export * from './cluster-network.js';
export * from './local-registry.js';
export * from './outrigger-install.js';
export * from './xxl-job-executor-client.js';
export * from './xxl-job-admin-stand-in.js';
export { clusterReapers } from './cluster-reaper.js';
