import { describe, expect, it } from 'vitest';
import { cloneJson, type JsonObject } from './json-value.js';

describe('cloneJson', () => {
  it('copies deeply: equal, and sharing no object or array with the input', () => {
    const pod = JSON.parse('{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","ports":[{"containerPort":80}]}]},"n":null,"b":false}') as JsonObject;
    const copy = cloneJson(pod);
    expect(copy).toEqual(pod);
    (((copy['spec'] as JsonObject)['containers'] as JsonObject[])[0] as JsonObject)['name'] = 'changed';
    ((copy['metadata'] as JsonObject)['labels'] as JsonObject)['app'] = 'changed';
    expect(pod).toEqual(JSON.parse('{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","ports":[{"containerPort":80}]}]},"n":null,"b":false}'));
  });

  it('keeps a `__proto__` key as an own data member, as JSON.parse does, without touching the prototype', () => {
    const hostile = JSON.parse('{"metadata":{"annotations":{"__proto__":{"polluted":"yes"}}}}') as JsonObject;
    const copy = cloneJson(hostile);
    const annotations = (copy['metadata'] as JsonObject)['annotations'] as JsonObject;
    expect(Object.getPrototypeOf(annotations)).toBe(Object.prototype);
    expect(Object.keys(annotations)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(JSON.stringify(copy)).toBe(JSON.stringify(hostile));
  });

  it('returns scalars as they are', () => {
    expect(cloneJson('text')).toBe('text');
    expect(cloneJson(3)).toBe(3);
    expect(cloneJson(null)).toBe(null);
  });
});
