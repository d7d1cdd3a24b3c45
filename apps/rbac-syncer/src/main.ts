import 'reflect-metadata';
import { startService } from '@outrigger/service';
import { AppModule } from './app.module.js';
import { rbacSyncerConfig } from './config/rbac-syncer.config.js';

const config = rbacSyncerConfig();
await startService(AppModule, { name: 'rbac-syncer', port: config.port });
