import 'reflect-metadata';
import { startService } from '@outrigger/service';
import { AppModule } from './app.module.js';
import { certManagerConfig } from './config/cert-manager.config.js';

// Validate the configuration before anything starts: a bad duration fails here, with its variable named.
const config = certManagerConfig();

await startService(AppModule, { name: 'cert-manager', port: config.port });
