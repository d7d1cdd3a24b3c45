export * from './certificate.js';
export * from './inspect.js';
