import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';

/**
 * Hostile request bodies for POST /mutate, generated deterministically from the realistic review
 * fixtures of @outrigger/admission. Shared by the fuzz e2e (a few thousand cases) and
 * the fuzz command beside it (fuzz-command.ts, `npm run fuzz`, 100 000+ cases).
 */

export const CATEGORIES = [
  'random-json',
  'random-text',
  'truncated-json',
  'field-type',
  'deep-nesting',
  'huge-string',
  'version-mix',
  'content-type',
  'empty-body',
  'non-utf8',
] as const;
export type Category = (typeof CATEGORIES)[number];

export interface HostileCase {
  readonly category: Category;
  /** Short human description, e.g. `v1-pod-opted-in.json request.object.spec <- array`. */
  readonly label: string;
  readonly body: Uint8Array;
  /** undefined: no Content-Type header at all. */
  readonly contentType: string | undefined;
  /** When set, the only acceptable status (besides the general contract). */
  readonly expectStatus?: number;
  /**
   * Over the body limit: the server answers 413 as soon as it reads Content-Length and closes the
   * connection, so the client may see EPIPE/ECONNRESET while still writing instead of the 413.
   */
  readonly mayCloseEarly?: boolean;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const FIXTURE_DIR = new URL('../../../libs/admission/fixtures/reviews/', import.meta.url);

export interface Fixture {
  readonly name: string;
  readonly text: string;
  readonly value: { [key: string]: Json };
  /** Every path (object keys and array indexes) below the root, parents before children. */
  readonly paths: readonly (readonly (string | number)[])[];
}

export function loadFixtures(): readonly Fixture[] {
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((name) => {
      const text = readFileSync(new URL(name, FIXTURE_DIR), 'utf8');
      const value = JSON.parse(text) as { [key: string]: Json };
      return { name, text, value, paths: pathsOf(value) };
    });
}

function pathsOf(value: Json, prefix: readonly (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push([...prefix, i]);
      pathsOf(item, [...prefix, i], out);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      out.push([...prefix, key]);
      pathsOf(item, [...prefix, key], out);
    }
  }
  return out;
}

const JSON_TYPE = 'application/json';
const encoder = new TextEncoder();
const bytes = (text: string): Uint8Array => encoder.encode(text);

/** The kinds of value a field is replaced with ('missing' deletes it). */
export const REPLACEMENTS = ['null', 'number', 'string', 'array', 'object', 'huge-string', 'boolean', 'missing', 'deep'] as const;
export type Replacement = (typeof REPLACEMENTS)[number];

const HUGE_SIZES = [64 * 1024, 256 * 1024, 1024 * 1024] as const;

/** Serialises `fixture` with the value at `path` replaced; `deep` splices in raw 100k-level nesting. */
export function replaceField(fixture: Fixture, path: readonly (string | number)[], replacement: Replacement, variant: number, depth = 100_000): string {
  const copy = structuredClone(fixture.value) as Json;
  const marker = `__outrigger_fuzz_marker_${variant}__`;
  let parent = copy as { [key: string]: Json } | Json[];
  for (const token of path.slice(0, -1)) parent = (parent as Record<string | number, Json>)[token] as { [key: string]: Json } | Json[];
  const last = path[path.length - 1] as string | number;
  const slot = parent as Record<string | number, Json>;
  switch (replacement) {
    case 'null':
      slot[last] = null;
      break;
    case 'number':
      slot[last] = [0, -1, 1.5, 1e308, -1e-308, 2 ** 53 + 1, 4294967296][variant % 7] as number;
      break;
    case 'string':
      slot[last] = ['', ' ', 'true', '0', '\u0000', '\uD800x', '{"a":1}', '../../etc', '\u202e\u0301'][variant % 9] as string;
      break;
    case 'array':
      slot[last] = [[], [null], [1, 'a', {}], [[[]]]][variant % 4] as Json;
      break;
    case 'object':
      slot[last] = [{}, { a: 1 }, { '': null }, { constructor: { prototype: {} } }, { toString: 'x', valueOf: 1 }][variant % 5] as Json;
      break;
    case 'huge-string':
      slot[last] = 'x'.repeat(HUGE_SIZES[variant % HUGE_SIZES.length] as number);
      break;
    case 'boolean':
      slot[last] = variant % 2 === 0;
      break;
    case 'missing':
      if (Array.isArray(parent)) parent.splice(last as number, 1);
      else delete slot[last];
      break;
    case 'deep':
      slot[last] = marker;
      return JSON.stringify(copy).replace(JSON.stringify(marker), deepJson(depth, variant));
  }
  return JSON.stringify(copy);
}

/** `n` levels of arrays or objects, as raw JSON text; `deep` replacements use 100k unless told. */
export function deepJson(n: number, variant: number): string {
  switch (variant % 3) {
    case 0:
      return '['.repeat(n) + ']'.repeat(n);
    case 1:
      return '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    default: {
      const half = Math.ceil(n / 2); // two levels per repetition
      return '[{"k":'.repeat(half) + 'null' + '}]'.repeat(half);
    }
  }
}

const fieldLabel = (fixture: Fixture, path: readonly (string | number)[]) => `${fixture.name} ${path.join('.') || '<root>'}`;

/** Every hand-picked case that must always be sent, whatever the seed. */
export function fixedCases(fixtures: readonly Fixture[]): HostileCase[] {
  const optedIn = fixtures.find((f) => f.name === 'v1-pod-opted-in.json') ?? (fixtures[0] as Fixture);
  const cases: HostileCase[] = [
    { category: 'empty-body', label: 'empty body, json type', body: new Uint8Array(), contentType: JSON_TYPE },
    { category: 'empty-body', label: 'empty body, no type', body: new Uint8Array(), contentType: undefined },
    { category: 'empty-body', label: 'whitespace body', body: bytes(' \n\t\r '), contentType: JSON_TYPE },
    { category: 'empty-body', label: 'BOM only', body: bytes('\uFEFF'), contentType: JSON_TYPE },
    { category: 'empty-body', label: 'literal null', body: bytes('null'), contentType: JSON_TYPE },
    { category: 'empty-body', label: 'empty object', body: bytes('{}'), contentType: JSON_TYPE },
    { category: 'empty-body', label: 'empty request', body: bytes('{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}'), contentType: JSON_TYPE },
    { category: 'non-utf8', label: 'BOM + fixture', body: bytes('\uFEFF' + optedIn.text), contentType: JSON_TYPE },
    { category: 'non-utf8', label: 'UTF-16LE fixture', body: Buffer.from(optedIn.text, 'utf16le'), contentType: 'application/json; charset=utf-16' },
    { category: 'non-utf8', label: 'latin1 byte in a string', body: Buffer.concat([Buffer.from(optedIn.text.slice(0, 40)), Buffer.from([0xe9, 0xff]), Buffer.from(optedIn.text.slice(40))]), contentType: JSON_TYPE },
    { category: 'non-utf8', label: 'lone surrogate escapes', body: bytes(optedIn.text.replace('"shop"', '"\\ud800\\udfff\\udc00"')), contentType: JSON_TYPE },
    { category: 'non-utf8', label: 'overlong NUL', body: Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc0, 0x80]), Buffer.from('"}')]), contentType: JSON_TYPE },
    { category: 'content-type', label: 'fixture, no content type', body: bytes(optedIn.text), contentType: undefined },
    { category: 'huge-string', label: 'body just under the 8 MiB limit', body: bytes(optedIn.text.replace('"orders-worker"', JSON.stringify('w'.repeat(8 * 1024 * 1024 - optedIn.text.length - 64)))), contentType: JSON_TYPE },
    {
      category: 'huge-string',
      label: 'body just over the 8 MiB limit',
      body: bytes(optedIn.text.replace('"orders-worker"', JSON.stringify('w'.repeat(8 * 1024 * 1024 + 10)))),
      contentType: JSON_TYPE,
      expectStatus: 413,
      mayCloseEarly: true,
    },
  ];
  for (let v = 0; v < 3; v++) {
    cases.push({ category: 'deep-nesting', label: `whole body ${v}: 100k levels`, body: bytes(deepJson(100_000, v)), contentType: JSON_TYPE });
    cases.push({ category: 'deep-nesting', label: `whole body ${v}: 100k levels, unterminated`, body: bytes(deepJson(100_000, v).slice(0, 300_000)), contentType: JSON_TYPE });
  }
  for (const path of [['request'], ['request', 'object'], ['request', 'object', 'metadata', 'annotations'], ['request', 'object', 'spec', 'containers'], ['request', 'object', 'spec', 'containers', 0, 'env'], ['request', 'uid'], ['request', 'oldObject']]) {
    for (let v = 0; v < 3; v++) {
      cases.push({
        category: 'deep-nesting',
        label: `${fieldLabel(optedIn, path)} <- 100k levels (${v})`,
        body: bytes(replaceField(optedIn, path, 'deep', v)),
        contentType: JSON_TYPE,
      });
    }
  }
  // Depths a real API server lets through (it caps JSON nesting at 10 000). Before 700e285 a pod
  // nested ~2 000 object levels deep overflowed the stack in structuredClone (mutatePod) and got a
  // 500; since then the injector refuses JSON deeper than 1 000 levels with a 400, so 500 levels
  // must still be admitted and 2 500 or 10 000 refused.
  for (const depth of [500, 2_500, 10_000]) {
    for (let v = 0; v < 3; v++) {
      const path = ['request', 'object', 'spec', 'priority'];
      cases.push({
        category: 'deep-nesting',
        label: `${fieldLabel(optedIn, path)} <- ${depth} levels (${v})`,
        body: bytes(replaceField(optedIn, path, 'deep', v, depth)),
        contentType: JSON_TYPE,
        expectStatus: depth > 1_000 ? 400 : 200,
      });
    }
  }
  return cases;
}

const CONTENT_TYPES: readonly (string | undefined)[] = [
  undefined,
  '',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  'application/json-patch+json',
  'application/octet-stream',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json ; charset=latin1',
  'application/json;;;',
  'application/*',
  '*/*',
  'application/yaml',
  'x'.repeat(4000),
];

const API_VERSIONS: readonly Json[] = [
  'admission.k8s.io/v1',
  'admission.k8s.io/v1beta1',
  'admission.k8s.io/v2',
  'admission.k8s.io/V1',
  'v1',
  '',
  null,
  1,
  ['admission.k8s.io/v1'],
];

function caseArbitrary(fixtures: readonly Fixture[]): fc.Arbitrary<HostileCase> {
  const fixture = fc.constantFrom(...fixtures);
  const json = (text: string, category: Category, label: string): HostileCase => ({ category, label, body: bytes(text), contentType: JSON_TYPE });

  const randomJson = fc.jsonValue({ maxDepth: 6 }).map((v) => json(JSON.stringify(v), 'random-json', 'random JSON value'));
  const randomText = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ maxLength: 300 })).map((s) => json(s, 'random-text', 'random text'));
  const randomBytes = fc.uint8Array({ minLength: 1, maxLength: 600 }).map((b): HostileCase => ({ category: 'non-utf8', label: 'random bytes', body: b, contentType: JSON_TYPE }));
  const truncated = fc.tuple(fixture, fc.nat()).map(([f, cut]) => json(f.text.slice(0, cut % f.text.length), 'truncated-json', `${f.name} cut at ${cut % f.text.length}`));
  const fieldType = fc
    .tuple(fixture, fc.nat(), fc.constantFrom(...REPLACEMENTS.filter((r) => r !== 'deep')), fc.nat(1000))
    .map(([f, i, replacement, variant]) => {
      const path = f.paths[i % f.paths.length] as readonly (string | number)[];
      return json(replaceField(f, path, replacement, variant), replacement === 'huge-string' ? 'huge-string' : 'field-type', `${fieldLabel(f, path)} <- ${replacement}`);
    });
  const deepField = fc.tuple(fixture, fc.nat(), fc.nat(2)).map(([f, i, variant]) => {
    const path = f.paths[i % f.paths.length] as readonly (string | number)[];
    return json(replaceField(f, path, 'deep', variant), 'deep-nesting', `${fieldLabel(f, path)} <- 100k levels`);
  });
  const deepShallow = fc.tuple(fc.integer({ min: 1, max: 20_000 }), fc.nat(2)).map(([n, v]) => json(deepJson(n, v), 'deep-nesting', `whole body: ${n} levels`));
  const hugeString = fc.tuple(fixture, fc.constantFrom(...HUGE_SIZES), fc.constantFrom('"', '\\u0000', '\\"', 'é', '\\ud83d\\ude00')).map(([f, size, unit]) => {
    const value = `"${unit.repeat(Math.floor(size / Math.max(1, unit.length)))}"`;
    return json(f.text.replace(/"uid": "[^"]*"/, unit === '"' ? `"uid": "${'u'.repeat(size)}"` : `"uid": ${value}`), 'huge-string', `${f.name} uid <- ${size} of ${unit}`);
  });
  const versionMix = fc.tuple(fixture, fc.constantFrom(...API_VERSIONS), fc.constantFrom<Json>('AdmissionReview', 'AdmissionReviewList', null, ''), fc.boolean()).map(([f, apiVersion, kind, stripResponseFields]) => {
    const copy = structuredClone(f.value);
    copy['apiVersion'] = apiVersion;
    copy['kind'] = kind;
    const request = copy['request'];
    if (stripResponseFields && request && typeof request === 'object' && !Array.isArray(request)) {
      // v1beta1 bodies of older API servers omit requestKind/requestResource/options.
      delete request['requestKind'];
      delete request['requestResource'];
      delete request['options'];
      copy['response'] = { uid: 'stale', allowed: false };
    }
    return json(JSON.stringify(copy), 'version-mix', `${f.name} apiVersion ${JSON.stringify(apiVersion)} kind ${JSON.stringify(kind)}`);
  });
  const contentType = fc.tuple(fixture, fc.constantFrom(...CONTENT_TYPES)).map(([f, type]): HostileCase => ({
    category: 'content-type',
    label: `${f.name} as ${type === undefined ? '<none>' : JSON.stringify(type.slice(0, 40))}`,
    body: bytes(f.text),
    contentType: type,
  }));

  return fc.oneof(
    { arbitrary: randomJson, weight: 2 },
    { arbitrary: randomText, weight: 1 },
    { arbitrary: randomBytes, weight: 1 },
    { arbitrary: truncated, weight: 2 },
    { arbitrary: fieldType, weight: 10 },
    { arbitrary: deepField, weight: 1 },
    { arbitrary: deepShallow, weight: 1 },
    { arbitrary: hugeString, weight: 1 },
    { arbitrary: versionMix, weight: 2 },
    { arbitrary: contentType, weight: 2 },
  );
}

/**
 * Every field of `fixture`, in turn, replaced by each kind of wrong value (null, number, string,
 * array, object, huge string, boolean, missing), the rest of the review left intact.
 */
export function* fieldWalk(fixture: Fixture): Generator<HostileCase> {
  for (const [i, path] of fixture.paths.entries()) {
    for (const replacement of REPLACEMENTS) {
      if (replacement === 'deep') continue;
      yield {
        category: replacement === 'huge-string' ? 'huge-string' : 'field-type',
        label: `${fieldLabel(fixture, path)} <- ${replacement} (walk)`,
        body: bytes(replaceField(fixture, path, replacement, i)),
        contentType: JSON_TYPE,
      };
    }
  }
}

export interface HostileCaseOptions {
  readonly seed: number;
  readonly count: number;
  /** Fixtures whose every field is replaced in turn before the random cases (default: v1-pod-opted-in.json). */
  readonly walk?: readonly string[] | 'all';
}

/**
 * The fixed cases, then the field walk, then random ones: `count` in all. Deterministic for a given
 * seed; generated lazily and in batches so 100 000 cases never sit in memory together.
 */
export function* hostileCases(options: HostileCaseOptions): Generator<HostileCase> {
  const fixtures = loadFixtures();
  const walk = options.walk === 'all' ? fixtures : fixtures.filter((f) => (options.walk ?? ['v1-pod-opted-in.json']).includes(f.name));
  let produced = 0;
  function* upTo(cases: Iterable<HostileCase>): Generator<HostileCase> {
    for (const c of cases) {
      if (produced >= options.count) return;
      produced++;
      yield c;
    }
  }
  yield* upTo(fixedCases(fixtures));
  for (const fixture of walk) yield* upTo(fieldWalk(fixture));
  const arbitrary = caseArbitrary(fixtures);
  for (let batch = 0; produced < options.count; batch++) {
    yield* upTo(fc.sample(arbitrary, { seed: options.seed + batch, numRuns: Math.min(500, options.count - produced) }));
  }
}
