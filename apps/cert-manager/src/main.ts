import 'reflect-metadata';
import { runService, startService } from '@outrigger/service';
import { AppModule } from './app.module.js';
import { certManagerConfig } from './config/cert-manager.config.js';

// Validate the configuration before anything starts: a bad duration fails here, with its variable named.
await runService('cert-manager', async () => {
  const config = certManagerConfig();
  await startService(AppModule, { name: 'cert-manager', port: config.port });
});
