export * from './binaries.js';
export * from './control-plane.js';
export * from './managed-process.js';
export * from './ports.js';
export * from './test-namespace.js';
export * from './app-process.js';
export * from './tls-probe.js';
export * from './cluster/index.js';
