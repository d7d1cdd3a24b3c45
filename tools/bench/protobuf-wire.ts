// The few pieces of the protobuf wire format the benches read (no decoder library needed for a count).

export function varint(buf: Uint8Array, at: number): [number, number] {
  let value = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = buf[at++] ?? 0;
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return [value, at];
  }
}

/** Calls `visit` with each length-delimited field of the message b[from, to); other wire types are skipped. */
export function eachField(b: Uint8Array, from: number, to: number, visit: (field: number, start: number, end: number) => void): void {
  let at = from;
  while (at < to) {
    const [key, afterKey] = varint(b, at);
    const wire = key & 7;
    if (wire === 2) {
      const [length, start] = varint(b, afterKey);
      visit(key >>> 3, start, start + length);
      at = start + length;
    } else if (wire === 0) at = varint(b, afterKey)[1];
    else if (wire === 1) at = afterKey + 8;
    else if (wire === 5) at = afterKey + 4;
    else throw new Error(`protobuf wire type ${wire} at ${at}`);
  }
}

/** The first length-delimited field `number` of a message (which may be cut short after it). */
export function firstField(message: Buffer, number: number): Buffer | undefined {
  let found: Buffer | undefined;
  eachField(message, 0, message.length, (field, start, end) => {
    if (field === number && !found) found = message.subarray(start, end);
  });
  return found;
}
