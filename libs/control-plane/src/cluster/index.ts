export * from './cluster.js';
export * from './cluster-network.js';
export * from './outrigger-install.js';
