import { describe, expect, it } from 'vitest';
import { agentProfileEntry, agentProfileObject } from './agent-profile-object.js';
import { ProfileSource } from './profile-source.js';
import { referenceProfile } from './reference-profile.js';

const log = () => {
  const lines: string[] = [];
  return { lines, log: (m: string) => lines.push(`log ${m}`), warn: (m: string) => lines.push(`warn ${m}`), error: (m: string) => lines.push(`error ${m}`) };
};
const entry = (spec: object, generation: number) => {
  const e = agentProfileEntry({ ...agentProfileObject(referenceProfile()), metadata: { name: 'xxl-job', generation, creationTimestamp: '2026-01-01T00:00:00Z' }, spec });
  if (!e) throw new Error('no entry');
  return e;
};

describe('ProfileSource', () => {
  it('from objects: keeps the last good generation and logs each verdict once', () => {
    const logger = log();
    const source = new ProfileSource(logger);
    const good = agentProfileObject(referenceProfile()).spec;
    expect(source.fromObjects([entry(good, 1)]).changed).toBe(true);
    expect(source.fromObjects([entry(good, 1)]).changed).toBe(false);
    const bad = source.fromObjects([entry({ ...good, annotationPrefix: 'no slash' }, 2)]);
    expect(bad.changed).toBe(false);
    expect(source.inForce().map((p) => p.generation)).toEqual([1]);
    expect(source.verdict('xxl-job')?.accepted).toBe(false);
    expect(logger.lines.filter((l) => l.startsWith('error'))).toHaveLength(1);
    expect(logger.lines.filter((l) => l.startsWith('log'))).toHaveLength(1);
  });

  it('from a file: all or nothing, the previous profiles stay on a bad file', () => {
    const source = new ProfileSource(log());
    const text = `apiVersion: outrigger.dev/v1alpha1\nkind: AgentProfile\nmetadata: { name: a }\nspec: ${JSON.stringify(agentProfileObject(referenceProfile()).spec)}\n`;
    const first = source.fromFile(text);
    expect(first.ok && first.value.changed).toBe(true);
    const again = source.fromFile(text);
    expect(again.ok && again.value.changed).toBe(false);
    expect(source.fromFile('kind: Nonsense').ok).toBe(false);
    expect(source.inForce().map((p) => p.profile.name)).toEqual(['a']);
  });
});
