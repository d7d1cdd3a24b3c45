import { describe, expect, it } from 'vitest';
import { decodeKubeObject, decodeWatchEvent, type ProtobufSchema, sharingMessages, withoutFields } from './protobuf-schema.js';

// The decoder's rules on hand-written bytes; protobuf.e2e.ts holds it to the API server's own JSON.

const SCHEMA: ProtobufSchema = {
  kinds: { Thing: 't.Thing' },
  messages: {
    't.Thing': {
      1: { json: 'name', type: 'string', omitEmpty: true },
      2: { json: 'count', type: 'int', omitEmpty: true, pointer: true },
      3: { json: 'tags', type: 'string', repeated: true, omitEmpty: true },
      4: { json: 'labels', type: 'map', mapValue: 'string', omitEmpty: true },
      5: { json: 'created', type: 'time', omitZero: true },
      6: { json: 'port', type: 'intOrString' },
      7: { json: '', type: 't.Inner', inline: true },
      8: { json: 'size', type: 'quantity', pointer: true, omitEmpty: true },
      9: { json: 'groups', type: 'int', repeated: true },
      10: { json: 'mode', type: 'string' },
      11: { json: 'inner', type: 't.Inner' },
      12: { json: 'limits', type: 'map', mapValue: 'quantity' },
    },
    't.Inner': {
      1: { json: 'flag', type: 'bool', omitEmpty: true },
      2: { json: 'level', type: 'int' },
    },
  },
};

const varint = (value: bigint): number[] => {
  const bytes: number[] = [];
  let rest = BigInt.asUintN(64, value);
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    bytes.push(rest > 0n ? low | 0x80 : low);
  } while (rest > 0n);
  return bytes;
};
const int = (field: number, value: number | bigint): number[] => [...varint(BigInt(field << 3)), ...varint(BigInt(value))];
const bytes = (field: number, payload: number[] | string): number[] => {
  const body = typeof payload === 'string' ? [...Buffer.from(payload)] : payload;
  return [...varint(BigInt((field << 3) | 2)), ...varint(BigInt(body.length)), ...body];
};
const envelope = (kind: string, message: number[]): Uint8Array =>
  Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...bytes(1, [...bytes(1, 'v1'), ...bytes(2, kind)]), ...bytes(2, message)]);
const decode = (...fields: number[][]) => decodeKubeObject(SCHEMA, envelope('Thing', fields.flat()));

describe('decodeKubeObject', () => {
  it('writes what encoding/json writes for absent and zero fields', () => {
    expect(decode()).toStrictEqual({ kind: 'Thing', apiVersion: 'v1', mode: '', port: 0, groups: null, level: 0, inner: { level: 0 }, limits: null });
    // Go writes empty strings and zeros in protobuf; omitempty drops them, except behind a pointer.
    expect(decode(bytes(1, ''), int(2, 0), bytes(11, int(1, 0)))).toMatchObject({ count: 0, inner: { level: 0 } });
    expect(decode(bytes(1, ''))).not.toHaveProperty('name');
    expect(decode(bytes(11, int(1, 0))).inner).not.toHaveProperty('flag');
  });

  it('reads negative numbers (ten-byte varints), packed and unpacked repeated numbers, and inlined messages', () => {
    expect(decode(int(2, -1n), int(9, 5), int(9, -2n), bytes(9, [...varint(7n), ...varint(2n ** 40n)]), bytes(7, [...int(1, 1), ...int(2, 3)]))).toMatchObject({
      count: -1,
      groups: [5, -2, 7, 2 ** 40],
      flag: true,
      level: 3,
    });
  });

  it('turns apimachinery types into their JSON: time, quantity, IntOrString, maps', () => {
    const thing = decode(bytes(5, int(1, 1_764_158_400)), bytes(6, [...int(1, 1), ...bytes(3, 'http')]), bytes(8, bytes(1, '250m')), bytes(4, [...bytes(1, 'app'), ...bytes(2, 'shop')]), bytes(12, bytes(1, 'cpu')));
    expect(thing).toMatchObject({ created: '2025-11-26T12:00:00Z', port: 'http', size: '250m', labels: { app: 'shop' }, limits: { cpu: '0' } });
    expect(decode(bytes(5, []))).not.toHaveProperty('created'); // the zero time, omitzero
    expect(decode(bytes(6, [...int(1, 0), ...int(2, 8080)])).port).toBe(8080);
  });

  it('keeps a field it has no schema for visible, so a comparison with what we render fails', () => {
    expect(decode(int(99, 1), bytes(98, 'x'))).toMatchObject({ '(protobuf field 99)': true, '(protobuf field 98)': true });
  });

  it('refuses bytes that are not a well-formed object, naming what is wrong', () => {
    expect(() => decode(int(1, 5))).toThrow('t.Thing field 1 (name) has wire type 0, expected 2');
    expect(() => decode([0x0a, 0x05, 0x61])).toThrow(/runs past its message/);
    expect(() => decode([0x10, 0x80])).toThrow(/ends inside a varint/);
    expect(() => decodeKubeObject(SCHEMA, Uint8Array.from([0x7b, 0x7d]))).toThrow('does not start with the k8s envelope');
    expect(() => decodeKubeObject(SCHEMA, envelope('Other', []))).toThrow('no schema for kind "Other"');
  });
});

describe('withoutFields', () => {
  it('skips the named fields unread, and refuses a name the schema lacks', () => {
    const schema = withoutFields(SCHEMA, ['t.Thing.labels', 't.Inner.level']);
    const thing = decodeKubeObject(schema, envelope('Thing', [...bytes(4, [...bytes(1, 'app'), ...bytes(2, 'shop')]), ...bytes(11, int(2, 3)), ...bytes(1, 'a')]));
    expect(thing).toStrictEqual({ kind: 'Thing', apiVersion: 'v1', name: 'a', mode: '', port: 0, groups: null, inner: {}, limits: null });
    expect(() => withoutFields(SCHEMA, ['t.Thing.nothing'])).toThrow('no field t.Thing.nothing');
  });
});

describe('sharingMessages', () => {
  const shared = sharingMessages(SCHEMA, ['t.Inner']);
  const decodeShared = (...fields: number[][]) => decodeKubeObject(shared, envelope('Thing', fields.flat()));

  it('gives objects with byte-equal messages one frozen value, the same as decoding each', () => {
    const first = decodeShared(bytes(1, 'a'), bytes(11, [...int(1, 1), ...int(2, 7)]));
    const second = decodeShared(bytes(1, 'b'), bytes(11, [...int(1, 1), ...int(2, 7)]));
    expect(second['inner']).toBe(first['inner']);
    expect(second).toStrictEqual(decode(bytes(1, 'b'), bytes(11, [...int(1, 1), ...int(2, 7)])));
    expect(Object.isFrozen(first['inner'])).toBe(true);
    expect(() => Object.assign(first['inner'] as object, { level: 8 })).toThrow(TypeError);
    expect(decodeShared(bytes(11, [...int(1, 1), ...int(2, 7)]))['inner']).toStrictEqual({ flag: true, level: 7 });
  });

  it('never gives one value for other bytes, whatever their length', () => {
    const values = [7, 8, 7, 300, 8].map((level) => decodeShared(bytes(11, int(2, level)))['inner']);
    expect(values).toStrictEqual([7, 8, 7, 300, 8].map((level) => ({ level })));
    expect(values[1]).not.toBe(values[0]);
  });

  it('refuses a name the schema lacks', () => {
    expect(() => sharingMessages(SCHEMA, ['t.Nothing'])).toThrow('no message t.Nothing');
  });
});

describe('decodeWatchEvent', () => {
  it('reads the type and the enveloped object', () => {
    const object = [...envelope('Thing', bytes(1, 'a'))];
    expect(decodeWatchEvent(SCHEMA, Uint8Array.from([...bytes(1, 'ADDED'), ...bytes(2, bytes(1, object))]))).toStrictEqual({
      type: 'ADDED',
      object: { kind: 'Thing', apiVersion: 'v1', name: 'a', mode: '', port: 0, groups: null, level: 0, inner: { level: 0 }, limits: null },
    });
    expect(() => decodeWatchEvent(SCHEMA, Uint8Array.from(bytes(1, 'ADDED')))).toThrow('without a type or an object');
  });
});
