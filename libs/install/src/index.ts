export * from './service-permissions.js';
