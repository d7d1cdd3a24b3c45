export * from './certificate.js';
export * from './certificate-bundle.js';
export * from './parsed-certificate.js';
export * from './pem-blocks.js';
