import 'reflect-metadata';
import { ConsoleLogger, type INestApplication, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loggingOptions } from './logging.js';
import { endPreRequestConnectionsOnClose } from './pre-request-connections.js';

export interface ServiceOptions {
  readonly name: string;
  readonly host?: string;
  readonly port: number;
  /** Serve HTTPS with this key pair (the server's secure context can be swapped later). */
  readonly https?: { readonly key: string; readonly cert: string; readonly ca?: string; readonly requestCert?: boolean };
  readonly bodyLimitBytes?: number;
  readonly adapter?: FastifyAdapter;
  /** false: the service registers its own content-type parsers on the adapter. */
  readonly bodyParser?: boolean;
}

/** Creates, configures and starts a service the same way for all three apps. */
export async function startService(module: Type<unknown>, options: ServiceOptions): Promise<NestFastifyApplication> {
  const logging = loggingOptions();
  const adapter =
    options.adapter ??
    new FastifyAdapter({
      logger: false,
      bodyLimit: options.bodyLimitBytes ?? 1024 * 1024,
      ...(options.https ? { https: { ...options.https, rejectUnauthorized: true } } : {}),
    });
  const app = await NestFactory.create<NestFastifyApplication>(module, adapter, {
    bodyParser: options.bodyParser ?? true,
    logger: new ConsoleLogger(options.name, { json: logging.json, logLevels: logging.levels }),
  });
  // SIGTERM from the kubelet: stop accepting, finish in-flight requests, run onModuleDestroy hooks.
  app.enableShutdownHooks();
  endPreRequestConnectionsOnClose(app.getHttpAdapter().getInstance());
  await app.listen(options.port, options.host ?? '0.0.0.0');
  return app;
}

/**
 * Runs a service's main: a startup failure (bad configuration, unreadable certificate, missing
 * permissions) ends the process with status 1 and one line naming what is wrong, not a stack trace.
 */
export async function runService(name: string, main: () => Promise<unknown>): Promise<void> {
  try {
    await main();
  } catch (error) {
    process.stderr.write(`${name}: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

export type { INestApplication };
