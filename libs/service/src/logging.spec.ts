import { describe, expect, it } from 'vitest';
import { loggingOptions } from './logging.js';

describe('loggingOptions', () => {
  it('defaults to JSON at info', () => {
    expect(loggingOptions({})).toEqual({ json: true, levels: ['fatal', 'error', 'warn', 'log'] });
  });

  it('maps each level and the text format', () => {
    expect(loggingOptions({ LOG_LEVEL: 'error', LOG_FORMAT: 'text' })).toEqual({ json: false, levels: ['fatal', 'error'] });
    expect(loggingOptions({ LOG_LEVEL: 'warn' }).levels).toEqual(['fatal', 'error', 'warn']);
    expect(loggingOptions({ LOG_LEVEL: 'debug' }).levels).toEqual(['fatal', 'error', 'warn', 'log', 'debug', 'verbose']);
  });

  it('refuses unknown values, naming the variable, the value and what is allowed', () => {
    expect(() => loggingOptions({ LOG_LEVEL: 'verbose', LOG_FORMAT: 'xml' })).toThrow(
      'invalid configuration:\n  LOG_LEVEL: "verbose" is not a log level: use one of error, warn, info, debug\n  LOG_FORMAT: "xml" is not a log format: use one of json, text',
    );
  });
});
