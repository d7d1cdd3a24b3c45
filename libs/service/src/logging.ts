import type { LogLevel } from '@nestjs/common';
import { z } from 'zod';
import { parseEnv } from './env.js';

const LEVELS = ['error', 'warn', 'info', 'debug'] as const;
const FORMATS = ['json', 'text'] as const;

const oneOf = (what: string, allowed: readonly string[]) => (issue: { input?: unknown }) =>
  `${JSON.stringify(issue.input)} is not a ${what}: use one of ${allowed.join(', ')}`;

const schema = z.object({
  LOG_LEVEL: z.enum(LEVELS, { error: oneOf('log level', LEVELS) }).default('info'),
  LOG_FORMAT: z.enum(FORMATS, { error: oneOf('log format', FORMATS) }).default('json'),
});

/** The logging settings, which every service reads besides its own. */
export const LOGGING_SETTINGS: readonly string[] = Object.keys(schema.shape);

export interface LoggingOptions {
  readonly json: boolean;
  readonly levels: LogLevel[];
}

/** LOG_LEVEL and LOG_FORMAT, validated once: an unknown value stops the service with the variable named. */
export function loggingOptions(env: NodeJS.ProcessEnv = process.env): LoggingOptions {
  const { LOG_LEVEL, LOG_FORMAT } = parseEnv(schema, env);
  const levels: LogLevel[] = ['fatal', 'error'];
  if (LOG_LEVEL !== 'error') levels.push('warn');
  if (LOG_LEVEL === 'info' || LOG_LEVEL === 'debug') levels.push('log');
  if (LOG_LEVEL === 'debug') levels.push('debug', 'verbose');
  return { json: LOG_FORMAT === 'json', levels };
}
