import { readFileSync } from 'node:fs';

/** Where a command writes and reads: the process by default, buffers in tests. */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
  readStdin(): string;
}

export const processIo: CommandIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  readStdin: () => readFileSync(0, 'utf8'),
};

/** A problem with what the user gave (arguments, files): printed as `outrigger: <message>`, exit 1. */
export class UsageError extends Error {}
