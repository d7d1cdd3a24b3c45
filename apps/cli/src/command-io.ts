import { readFileSync } from 'node:fs';

/** Where a command writes and reads: the process by default, buffers in tests. */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
  readStdin(): string;
  /** A line rewritten in place while a long command runs; only where stderr is a terminal. */
  readonly progress?: ((text: string) => void) | undefined;
}

export const processIo: CommandIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  readStdin: () => readFileSync(0, 'utf8'),
  progress: process.stderr.isTTY ? (text) => process.stderr.write(`\r\x1b[K${text}`) : undefined,
};

/** A problem with what the user gave (arguments, files): printed as `outrigger: <message>`, exit 1. */
export class UsageError extends Error {}
