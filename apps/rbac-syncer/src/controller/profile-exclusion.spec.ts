import { describe, expect, it } from 'vitest';
import { ProfileExclusion } from './profile-exclusion.js';
import { namespaceKey, profileKey, statusKey, type SyncKey } from './sync-key.js';

/** Runs each key as work that records when it starts and ends, and ends when told to. */
function recorder(exclusion: ProfileExclusion) {
  const events: string[] = [];
  const finish = new Map<string, () => void>();
  const start = (name: string, key: SyncKey) =>
    exclusion.run(key, async () => {
      events.push(`start ${name}`);
      await new Promise<void>((resolve) => finish.set(name, resolve));
      events.push(`end ${name}`);
    });
  const end = async (name: string) => {
    finish.get(name)?.();
    await new Promise((r) => setImmediate(r));
  };
  return { events, start, end, settle: () => new Promise((r) => setImmediate(r)) };
}

describe('ProfileExclusion', () => {
  it('runs the namespace and status steps of a profile side by side', async () => {
    const { events, start, settle } = recorder(new ProfileExclusion(4));
    void start('a', namespaceKey('p', 'a'));
    void start('b', namespaceKey('p', 'b'));
    void start('status', statusKey('p'));
    await settle();
    expect(events).toEqual(['start a', 'start b', 'start status']);
  });

  it('runs the whole-profile step alone: after the steps in flight, before the steps queued after it', async () => {
    const { events, start, end, settle } = recorder(new ProfileExclusion(4));
    void start('a', namespaceKey('p', 'a'));
    void start('whole', profileKey('p'));
    void start('b', namespaceKey('p', 'b'));
    await settle();
    expect(events).toEqual(['start a']);
    await end('a');
    expect(events).toEqual(['start a', 'end a', 'start whole']);
    await end('whole');
    await settle();
    expect(events).toEqual(['start a', 'end a', 'start whole', 'end whole', 'start b']);
  });

  it('keeps profiles apart: one profile\'s whole step does not wait for another\'s namespaces', async () => {
    const { events, start, settle } = recorder(new ProfileExclusion(4));
    void start('p-a', namespaceKey('p', 'a'));
    void start('q', profileKey('q'));
    await settle();
    expect(events).toEqual(['start p-a', 'start q']);
  });

  it('releases the profile when a step throws', async () => {
    const exclusion = new ProfileExclusion(2);
    await expect(exclusion.run(profileKey('p'), () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(exclusion.run(profileKey('p'), () => Promise.resolve('ran'))).resolves.toBe('ran');
  });
});
