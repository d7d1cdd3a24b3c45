import { poll } from '@outrigger/control-plane';

/** Reads until `accept` holds, naming `what` and the last value read when it times out. */
export function eventually<T>(what: string, read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  return poll(
    what,
    async () => {
      const value = await read();
      if (!accept(value)) throw new Error(`last: ${JSON.stringify(value instanceof Map ? [...value] : value)?.slice(0, 400)}`);
      return value;
    },
    timeoutMs,
  );
}
