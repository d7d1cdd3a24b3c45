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

describe('ProfileSource warnings', () => {
  // A profile an operator should hear about: an escalation it opts into, in a rule that reaches every namespace.
  const reference = agentProfileObject(referenceProfile()).spec;
  const loud = { ...reference, rbac: { clusterRole: 'r', binding: { kind: 'ClusterRoleBinding', name: 'r' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }], dangerouslyAllowEscalation: ['secrets-read'] } };
  const warnings = (lines: string[]) => lines.filter((l) => l.startsWith('warn '));

  it('from objects: warns of each escalation grant and cluster-wide rule when the generation comes into force, once', () => {
    const logger = log();
    const source = new ProfileSource(logger);
    source.fromObjects([entry(loud, 1)]);
    expect(source.inForce().map((p) => p.generation)).toEqual([1]);
    const first = warnings(logger.lines);
    expect(first.some((l) => l.includes('secrets-read'))).toBe(true);
    expect(first.some((l) => l.includes('rbac.rules[0] (get on secrets) applies in every namespace'))).toBe(true);
    source.fromObjects([entry(loud, 1)]);
    expect(warnings(logger.lines)).toEqual(first);
    // The reference profile says nothing.
    const quiet = log();
    new ProfileSource(quiet).fromObjects([entry(reference, 1)]);
    expect(warnings(quiet.lines)).toEqual([]);
  });

  it('from a file: warns when the file brings the profile, not again for the same file', () => {
    const logger = log();
    const source = new ProfileSource(logger);
    const text = `apiVersion: outrigger.dev/v1alpha1\nkind: AgentProfile\nmetadata: { name: a }\nspec: ${JSON.stringify(loud)}\n`;
    expect(source.fromFile(text).ok).toBe(true);
    const first = warnings(logger.lines);
    expect(first.some((l) => l.includes('secrets-read'))).toBe(true);
    source.fromFile(text);
    expect(warnings(logger.lines)).toEqual(first);
  });
});

