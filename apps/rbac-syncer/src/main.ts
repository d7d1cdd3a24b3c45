import 'reflect-metadata';
import { runService, startService } from '@outrigger/service';
import { AppModule } from './app.module.js';
import { rbacSyncerConfig } from './config/rbac-syncer.config.js';

await runService('rbac-syncer', async () => {
  const config = rbacSyncerConfig();
  await startService(AppModule, { name: 'rbac-syncer', port: config.port });
});
