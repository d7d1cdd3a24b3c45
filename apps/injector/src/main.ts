import './v8-flags.js';
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { runService, startService } from '@outrigger/service';
import { AppModule } from './app.module.js';
import { injectorConfig } from './config/injector.config.js';
import { checkServingPair, readPemFiles } from './tls/serving-pair.js';

await runService('injector', async () => {
  const config = injectorConfig();
  const pair = readPemFiles(config.tls.certFile, config.tls.keyFile);
  // An expired pair still starts (a watched Secret may bring the renewed one); a broken one cannot.
  checkServingPair(pair);
  const clientCa = config.tls.clientCaFile ? readFileSync(config.tls.clientCaFile, 'utf8') : undefined;

  const adapter = new FastifyAdapter({
    logger: false,
    bodyLimit: config.bodyLimitBytes,
    // With a client CA, every caller is asked for a certificate; /mutate refuses callers without a
    // valid one, while kubelet probes (which have none) still reach /healthz and /readyz. Once the
    // app runs, each handshake presents what the certificate source answers (tls/https-handshake.ts).
    https: { cert: pair.cert, key: pair.key, ...(clientCa ? { ca: clientCa, requestCert: true, rejectUnauthorized: false } : {}) },
  });
  await startService(AppModule, { name: 'injector', port: config.port, adapter, bodyParser: false });
});
