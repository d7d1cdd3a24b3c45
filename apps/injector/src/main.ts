import './v8-flags.js';
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { runService, startService } from '@outrigger/service';
import { AppModule } from './app.module.js';
import { injectorConfig } from './config/injector.config.js';
import { injectorAdapter } from './injector-adapter.js';
import { checkServingPair, readPemFiles } from './tls/serving-pair.js';

await runService('injector', async () => {
  const config = injectorConfig();
  const pair = readPemFiles(config.tls.certFile, config.tls.keyFile);
  // An expired pair still starts (a watched Secret may bring the renewed one); a broken one cannot.
  checkServingPair(pair);
  const clientCa = config.tls.clientCaFile ? readFileSync(config.tls.clientCaFile, 'utf8') : undefined;

  const adapter = injectorAdapter({ bodyLimitBytes: config.bodyLimitBytes, cert: pair.cert, key: pair.key, clientCa });
  await startService(AppModule, { name: 'injector', port: config.port, adapter, bodyParser: false });
});
