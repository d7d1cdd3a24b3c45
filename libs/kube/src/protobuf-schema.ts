import type { KubeObject } from './kube-object.js';

/**
 * What a reader of Kubernetes protobuf needs to rebuild the JSON the API server would have sent
 * for the same object, generated from the Go types (tools/kube/cmd/protobuf-schema): per message,
 * each field's number and its encoding/json facts. Go writes zero values in protobuf that JSON
 * omits, and inlined structs are nested messages there, so generated.proto alone is not enough.
 */
export interface ProtobufSchema {
  /** Kind (from the envelope's TypeMeta) → message name. */
  readonly kinds: Readonly<Record<string, string>>;
  readonly messages: Readonly<Record<string, Readonly<Record<number, ProtobufField>>>>;
  /** Messages decoded once per distinct bytes and shared, frozen, by every object carrying them (see sharingMessages). */
  readonly shared?: readonly string[];
}

export interface ProtobufField {
  readonly json: string;
  /** A scalar, a special (apimachinery's own protobuf forms), `map`, or a message name. */
  readonly type: string;
  readonly repeated?: boolean;
  readonly mapValue?: string;
  readonly omitEmpty?: boolean;
  readonly omitZero?: boolean;
  readonly pointer?: boolean;
  readonly inline?: boolean;
  /** Skipped unread, neither decoded nor defaulted (see withoutFields). */
  readonly omit?: boolean;
}

/** The content type of Kubernetes protobuf; with `;stream=watch` for watches. */
export const KUBE_PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** The magic that starts every protobuf-encoded object (runtime.Unknown follows). */
const ENVELOPE_MAGIC = [0x6b, 0x38, 0x73, 0x00];

// The scalars first: `kind <= Kind.Bytes` is how encoding/json's omitempty applies.
const enum Kind {
  String,
  Bool,
  Int,
  Bytes,
  Message,
  Map,
  Time,
  MicroTime,
  Quantity,
  IntOrString,
  RawJson,
}

const KINDS: Readonly<Record<string, Kind>> = {
  string: Kind.String,
  bool: Kind.Bool,
  int: Kind.Int,
  bytes: Kind.Bytes,
  map: Kind.Map,
  time: Kind.Time,
  microTime: Kind.MicroTime,
  quantity: Kind.Quantity,
  intOrString: Kind.IntOrString,
  fieldsV1: Kind.RawJson,
  rawExtension: Kind.RawJson,
};

interface Message {
  readonly name: string;
  byNumber: Array<Field | undefined>;
  /** The fields encoding/json writes even when protobuf did not carry them (see finish). */
  defaults: Field[];
  /** Set for a shared message: its recent decodings by their length. */
  recent: Map<number, Decoded> | undefined;
}

/** A shared message's bytes and what they decoded to (frozen). */
interface Decoded {
  readonly bytes: Buffer;
  readonly value: Record<string, unknown>;
}

/** How many distinct lengths a shared message remembers before it starts over. */
const SHARED_LENGTHS = 1024;

/** Every field has every member, so the decoder's loads see one shape. */
interface Field {
  readonly number: number;
  readonly json: string;
  readonly type: string;
  readonly kind: Kind;
  readonly repeated: boolean;
  readonly omitEmpty: boolean;
  readonly omitZero: boolean;
  readonly pointer: boolean;
  readonly inline: boolean;
  readonly omit: boolean;
  message: Message | undefined;
  readonly valueKind: Kind | undefined;
  valueMessage: Message | undefined;
}

interface Compiled {
  readonly kinds: ReadonlyMap<string, Message>;
}

const compiledSchemas = new WeakMap<ProtobufSchema, Compiled>();

/** Resolves names once per schema, so decoding follows references and never looks a name up. */
function compile(schema: ProtobufSchema): Compiled {
  const cached = compiledSchemas.get(schema);
  if (cached) return cached;
  const messages = new Map<string, Message>();
  const kindOf = (type: string): Kind => KINDS[type] ?? Kind.Message;
  const messageOf = (type: string, where: string): Message => {
    const message = messages.get(type);
    if (!message) throw new Error(`protobuf schema: ${where} refers to message ${type}, which it does not define`);
    return message;
  };
  for (const name of Object.keys(schema.messages)) messages.set(name, { name, byNumber: [], defaults: [], recent: undefined });
  for (const name of schema.shared ?? []) messageOf(name, 'shared').recent = new Map();
  for (const [name, fields] of Object.entries(schema.messages)) {
    const message = messageOf(name, name);
    for (const [number, spec] of Object.entries(fields)) {
      const kind = kindOf(spec.type);
      const valueKind = spec.mapValue === undefined ? undefined : kindOf(spec.mapValue);
      const field: Field = {
        number: Number(number),
        json: spec.json,
        type: spec.type,
        kind,
        repeated: spec.repeated === true,
        omitEmpty: spec.omitEmpty === true,
        omitZero: spec.omitZero === true,
        pointer: spec.pointer === true,
        inline: spec.inline === true,
        omit: spec.omit === true,
        message: undefined,
        valueKind,
        valueMessage: undefined,
      };
      if (kind === Kind.Message) field.message = messageOf(spec.type, `${name}.${spec.json}`);
      if (valueKind === Kind.Message && spec.mapValue) field.valueMessage = messageOf(spec.mapValue, `${name}.${spec.json}`);
      message.byNumber[field.number] = field;
      if (writtenWhenAbsent(field)) message.defaults.push(field);
    }
  }
  const kinds = new Map(Object.entries(schema.kinds).map(([kind, name]) => [kind, messageOf(name, `kind ${kind}`)]));
  const compiled = { kinds };
  compiledSchemas.set(schema, compiled);
  return compiled;
}

/** encoding/json's rules: omitempty drops zero scalars, nil slices, maps and pointers, never structs. */
function writtenWhenAbsent(field: Field): boolean {
  if (field.omit || field.omitZero) return false;
  if (field.inline) return true;
  if (field.repeated || field.pointer || field.kind === Kind.Map || field.kind <= Kind.Bytes) return !field.omitEmpty;
  return true;
}

/**
 * The schema with these fields (`message.json`, e.g. `metav1.ObjectMeta.managedFields`) skipped
 * unread, as a client-go transform drops them: for readers that never look at them.
 */
export function withoutFields(schema: ProtobufSchema, fields: readonly string[]): ProtobufSchema {
  const messages: Record<string, Record<number, ProtobufField>> = { ...schema.messages };
  for (const path of fields) {
    const dot = path.lastIndexOf('.');
    const [name, json] = [path.slice(0, dot), path.slice(dot + 1)];
    const entry = Object.entries(messages[name] ?? {}).find(([, field]) => field.json === json);
    if (!entry) throw new Error(`protobuf schema: no field ${path}`);
    messages[name] = { ...messages[name], [entry[0]]: { ...entry[1], omit: true } };
  }
  return { ...schema, messages };
}

/**
 * The schema with these messages (e.g. `v1.Container`) decoded once per distinct bytes: objects
 * whose copies are byte-equal (the containers of one workload's pods) share one decoded value,
 * deep-frozen, so a reader must never change what it is given. Saves the decoding, and lets
 * memos keyed by identity hold across objects.
 */
export function sharingMessages(schema: ProtobufSchema, names: readonly string[]): ProtobufSchema {
  for (const name of names) if (!schema.messages[name]) throw new Error(`protobuf schema: no message ${name}`);
  return { ...schema, shared: [...new Set([...(schema.shared ?? []), ...names])] };
}

/**
 * One protobuf-encoded object (`k8s\0` and a runtime.Unknown around the message) as the API
 * server's JSON would have it. A field the schema does not know becomes a member
 * `(protobuf field N)`, so that comparing it with what we render fails rather than passing
 * over what we cannot read. Throws on bytes that are not such an object, naming where.
 */
export function decodeKubeObject(schema: ProtobufSchema, bytes: Uint8Array): KubeObject {
  if (ENVELOPE_MAGIC.some((byte, i) => bytes[i] !== byte)) throw new Error('protobuf: the object does not start with the k8s envelope');
  const reader = new Reader(bytes, 4, bytes.length);
  let apiVersion = '';
  let kind = '';
  let raw: [number, number] | undefined;
  while (reader.pos < reader.end) {
    const key = reader.uint();
    const number = key >>> 3;
    const wire = key & 7;
    if (number === 1 && wire === 2) {
      const end = reader.lengthEnd();
      while (reader.pos < end) {
        const key = reader.uint();
        const field = key >>> 3;
        const fieldWire = key & 7;
        if (field === 1 && fieldWire === 2) apiVersion = reader.string();
        else if (field === 2 && fieldWire === 2) kind = reader.string();
        else reader.skip(fieldWire);
      }
    } else if (number === 2 && wire === 2) {
      const end = reader.lengthEnd();
      raw = [reader.pos, end];
      reader.pos = end;
    } else reader.skip(wire);
  }
  const message = compile(schema).kinds.get(kind);
  if (!message) throw new Error(`protobuf: no schema for kind ${JSON.stringify(kind)}`);
  const object: Record<string, unknown> = { kind, apiVersion };
  const body = new Reader(bytes, raw?.[0] ?? 0, raw?.[1] ?? 0);
  decodeInto(message, body, body.end, object);
  return finish(message, object) as KubeObject;
}

/** One event of a protobuf watch stream (metav1.WatchEvent, without its frame's length). */
export function decodeWatchEvent(schema: ProtobufSchema, bytes: Uint8Array): { type: string; object: KubeObject } {
  const reader = new Reader(bytes, 0, bytes.length);
  let type = '';
  let object: KubeObject | undefined;
  while (reader.pos < reader.end) {
    const key = reader.uint();
    const number = key >>> 3;
    const wire = key & 7;
    if (number === 1 && wire === 2) type = reader.string();
    else if (number === 2 && wire === 2) {
      const end = reader.lengthEnd();
      while (reader.pos < end) {
        const key = reader.uint();
        const field = key >>> 3;
        const fieldWire = key & 7;
        if (field === 1 && fieldWire === 2) {
          const rawEnd = reader.lengthEnd();
          object = decodeKubeObject(schema, bytes.subarray(reader.pos, rawEnd));
          reader.pos = rawEnd;
        } else reader.skip(fieldWire);
      }
    } else reader.skip(wire);
  }
  if (!type || !object) throw new Error('protobuf: a watch event without a type or an object');
  return { type, object };
}

function decodeInto(message: Message, reader: Reader, end: number, out: Record<string, unknown>): void {
  while (reader.pos < end) {
    const key = reader.uint();
    const number = key >>> 3;
    const wire = key & 7;
    const field = message.byNumber[number];
    if (field === undefined || field.omit) {
      if (field === undefined) out[`(protobuf field ${number})`] = true;
      reader.skip(wire);
      continue;
    }
    if (field.kind === Kind.String && !field.repeated) {
      // The commonest field, read without the generic path.
      expectWire(message, field, wire, 2);
      const text = reader.string();
      if (text !== '' || !field.omitEmpty || field.pointer) out[field.json] = text;
    } else if (field.inline) {
      expectWire(message, field, wire, 2);
      decodeInto(field.message as Message, reader, reader.lengthEnd(), out);
    } else if (field.kind === Kind.Map) {
      expectWire(message, field, wire, 2);
      const entries = (out[field.json] ??= {}) as Record<string, unknown>;
      const [key, value] = mapEntry(message, field, reader, reader.lengthEnd());
      entries[key] = value;
    } else if (field.repeated) {
      const list = (out[field.json] ??= []) as unknown[];
      if (field.kind === Kind.Int && wire === 2) {
        const packedEnd = reader.lengthEnd();
        while (reader.pos < packedEnd) list.push(reader.int64());
      } else list.push(value(message, field, field.kind, field.message, wire, reader));
    } else {
      const decoded = value(message, field, field.kind, field.message, wire, reader);
      // Go's encoding/json leaves these out; protobuf carries them (a pointer's zero is a value).
      if (field.omitZero && decoded === null) continue;
      if (field.omitEmpty && !field.pointer && field.kind <= Kind.Bytes && (decoded === '' || decoded === 0 || decoded === false)) continue;
      out[field.json] = decoded;
    }
  }
}

/** What encoding/json writes for the fields protobuf did not carry (nil slices, maps and pointers, zero structs). */
function finish(message: Message, out: Record<string, unknown>): Record<string, unknown> {
  for (const field of message.defaults) {
    if (field.inline) finish(field.message as Message, out);
    else if (out[field.json] === undefined) out[field.json] = zeroJson(field);
  }
  return out;
}

/** What encoding/json writes for a field protobuf did not carry: nil is null, a zero struct is its JSON. */
function zeroJson(field: Field): unknown {
  if (field.repeated || field.pointer || field.kind === Kind.Map) return null;
  switch (field.kind) {
    case Kind.String:
    case Kind.Bytes:
      return '';
    case Kind.Bool:
      return false;
    case Kind.Int:
    case Kind.IntOrString:
      return 0;
    case Kind.Quantity:
      return '0';
    case Kind.Message:
      return finish(field.message as Message, {});
    default:
      return null;
  }
}

function value(message: Message, field: Field, kind: Kind, nested: Message | undefined, wire: number, reader: Reader): unknown {
  if (kind === Kind.Bool || kind === Kind.Int) {
    expectWire(message, field, wire, 0);
    return kind === Kind.Bool ? reader.int64() !== 0 : reader.int64();
  }
  expectWire(message, field, wire, 2);
  if (kind === Kind.String) return reader.string();
  const end = reader.lengthEnd();
  switch (kind) {
    case Kind.Bytes:
      return reader.text(end, 'base64');
    case Kind.Message:
      return (nested as Message).recent ? shared(nested as Message, reader, end) : decodeMessage(nested as Message, reader, end);
    default:
      return special(message, field, kind, reader, end);
  }
}

function decodeMessage(message: Message, reader: Reader, end: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  decodeInto(message, reader, end, out);
  return finish(message, out);
}

/** A shared message: the earlier decoding of the same bytes, if the message remembers one. */
function shared(message: Message, reader: Reader, end: number): Record<string, unknown> {
  const recent = message.recent as Map<number, Decoded>;
  const length = end - reader.pos;
  const earlier = recent.get(length);
  if (earlier && reader.equals(earlier.bytes, end)) {
    reader.pos = end;
    return earlier.value;
  }
  const bytes = reader.copy(end);
  // Frozen from the start: whoever gets it first cannot change what later objects are given.
  const value = decodeMessage(message, reader, end);
  deepFreeze(value);
  if (recent.size >= SHARED_LENGTHS) recent.clear();
  recent.set(length, { bytes, value });
  return value;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  Object.freeze(value);
  for (const member of Object.values(value)) deepFreeze(member);
}

/** apimachinery's hand-written types: their JSON is not their message's. */
function special(message: Message, field: Field, kind: Kind, reader: Reader, end: number): unknown {
  const empty = reader.pos === end;
  const parts: unknown[] = [];
  while (reader.pos < end) {
    const key = reader.uint();
    const number = key >>> 3;
    const wire = key & 7;
    if (wire === 0) parts[number] = reader.int64();
    else if (wire === 2) parts[number] = reader.string();
    else throw new Error(`protobuf: ${message.name}.${field.json}: wire type ${wire} inside a ${field.type}`);
  }
  switch (kind) {
    case Kind.Time:
    case Kind.MicroTime: {
      // An empty message is the zero time (JSON null); metav1.Time keeps whole seconds only.
      if (empty) return null;
      const seconds = Number(parts[1] ?? 0);
      const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
      if (kind === Kind.Time) return `${iso}Z`;
      return `${iso}.${String(Math.floor(Number(parts[2] ?? 0) / 1000)).padStart(6, '0')}Z`;
    }
    case Kind.Quantity:
      return parts[1] ?? '0';
    case Kind.IntOrString:
      return parts[1] === 1 ? (parts[3] ?? '') : (parts[2] ?? 0);
    default: {
      const raw = parts[1];
      return typeof raw === 'string' && raw !== '' ? (JSON.parse(raw) as unknown) : null;
    }
  }
}

function mapEntry(message: Message, field: Field, reader: Reader, end: number): [string, unknown] {
  let entryKey = '';
  let entry: unknown;
  while (reader.pos < end) {
    const key = reader.uint();
    const number = key >>> 3;
    const wire = key & 7;
    if (number === 1) {
      expectWire(message, field, wire, 2);
      entryKey = reader.string();
    } else if (number === 2) entry = value(message, field, field.valueKind as Kind, field.valueMessage, wire, reader);
    else reader.skip(wire);
  }
  if (entry !== undefined) return [entryKey, entry];
  return [entryKey, field.valueKind === Kind.Quantity ? '0' : field.valueKind === Kind.Message ? finish(field.valueMessage as Message, {}) : ''];
}

function expectWire(message: Message, field: Field, wire: number, expected: number): void {
  if (wire !== expected) throw new Error(`protobuf: ${message.name} field ${field.number} (${field.json}) has wire type ${wire}, expected ${expected}`);
}

/** A cursor over protobuf bytes. */
class Reader {
  private readonly buffer: Buffer;

  constructor(
    readonly bytes: Uint8Array,
    public pos: number,
    readonly end: number,
  ) {
    this.buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  /** A varint of up to 53 bits. */
  uint(): number {
    // Most keys and lengths take one byte.
    const first = this.pos < this.end ? (this.bytes[this.pos] as number) : 0x80;
    if (first < 0x80) {
      this.pos++;
      return first;
    }
    let value = 0;
    for (let shift = 0; shift < 53; shift += 7) {
      const byte = this.byte();
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw new Error(`protobuf: a length or key varint over 53 bits at byte ${this.pos}`);
  }

  /** A signed 64-bit varint (int32 and int64 alike: negatives take ten bytes). */
  int64(): number {
    const start = this.pos;
    let value = 0;
    for (let shift = 0; shift < 49; shift += 7) {
      const byte = this.byte();
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    this.pos = start;
    let big = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const byte = this.byte();
      big |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return Number(BigInt.asIntN(64, big));
    }
    throw new Error(`protobuf: a varint over ten bytes at byte ${start}`);
  }

  /** Reads a length and returns where the field it announces ends. */
  lengthEnd(): number {
    const end = this.uint() + this.pos;
    if (end > this.end) throw new Error(`protobuf: a field of ${end - this.pos} bytes at byte ${this.pos} runs past its message`);
    return end;
  }

  string(): string {
    return this.text(this.lengthEnd(), 'utf8');
  }

  /** The bytes up to `end` as text, and moves there. */
  text(end: number, encoding: 'utf8' | 'base64'): string {
    const text = this.buffer.toString(encoding, this.pos, end);
    this.pos = end;
    return text;
  }

  /** Whether the bytes up to `end` are `bytes`. */
  equals(bytes: Buffer, end: number): boolean {
    return bytes.compare(this.buffer, this.pos, end) === 0;
  }

  /** A copy of the bytes up to `end`, without moving. */
  copy(end: number): Buffer {
    return Buffer.from(this.buffer.subarray(this.pos, end));
  }

  skip(wire: number): void {
    if (wire === 0) this.int64();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.pos = this.lengthEnd();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`protobuf: wire type ${wire} at byte ${this.pos}`);
    if (this.pos > this.end) throw new Error(`protobuf: a field runs past its message at byte ${this.pos}`);
  }

  private byte(): number {
    if (this.pos >= this.end) throw new Error(`protobuf: the message ends inside a varint at byte ${this.pos}`);
    return this.bytes[this.pos++] as number;
  }
}
