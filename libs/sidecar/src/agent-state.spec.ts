import { describe, expect, it } from 'vitest';
import { type JsonObject } from '@outrigger/admission';
import { type AgentProfile, referenceProfile } from '@outrigger/agent-profiles';
import { agentIsBindable, agentState, statusHash } from './agent-state.js';
import { statusAnnotation } from './injection-status.js';
import { loadReview, requestObject } from './testing/fixtures.js';
import { arrayAt, objectAt } from './testing/pods.js';

const injectedWith = referenceProfile();
/** The same profile with a new agent image: what an upgrade looks like. */
const upgraded: AgentProfile = { ...injectedWith, container: { ...injectedWith.container, image: `${injectedWith.container.image}-next` } };

function injectedPod(): JsonObject {
  return requestObject(loadReview('v1-pod-already-injected'));
}

function hashOf(pod: JsonObject): string | undefined {
  const value = objectAt(pod, 'metadata', 'annotations')[statusAnnotation(injectedWith)];
  return statusHash(typeof value === 'string' ? value : undefined);
}

describe('agentState', () => {
  it('is current for the agent the profile in force renders', () => {
    const state = agentState(injectedPod(), injectedWith, [injectedWith], () => undefined);
    expect(state).toEqual({ state: 'current' });
    expect(agentIsBindable(state)).toBe(true);
  });

  it('is outdated after the agent changed, and keeps its RBAC only while the spec that injected it is known', () => {
    const pod = injectedPod();
    const hash = hashOf(pod);
    expect(hash).toBeDefined();
    const known = agentState(pod, upgraded, [upgraded], (name, h) => (name === injectedWith.name && h === hash ? injectedWith : undefined));
    expect(known).toEqual({ state: 'outdated', hash, verified: true });
    expect(agentIsBindable(known)).toBe(true);
    const forgotten = agentState(pod, upgraded, [upgraded], () => undefined);
    expect(forgotten).toEqual({ state: 'outdated', hash, verified: false });
    expect(agentIsBindable(forgotten)).toBe(false);
  });

  it('does not trust a known spec the agent does not match', () => {
    const pod = injectedPod();
    const agent = arrayAt(pod, 'spec', 'containers').find((c) => (c as JsonObject)['name'] === injectedWith.container.name) as JsonObject;
    agent['command'] = ['sh', '-c', 'anything'];
    const state = agentState(pod, upgraded, [upgraded], () => injectedWith);
    expect(state).toMatchObject({ state: 'outdated', verified: false });
  });

  it('is missing when the pod carries neither the status nor the agent container', () => {
    const pod = injectedPod();
    delete objectAt(pod, 'metadata', 'annotations')[statusAnnotation(injectedWith)];
    const spec = objectAt(pod, 'spec');
    spec['containers'] = arrayAt(pod, 'spec', 'containers').filter((c) => (c as JsonObject)['name'] !== injectedWith.container.name);
    const state = agentState(pod, injectedWith, [injectedWith], () => injectedWith);
    expect(state).toEqual({ state: 'missing' });
    expect(agentIsBindable(state)).toBe(false);
  });
});

describe('statusHash', () => {
  it('reads the hash, and nothing from values the injector never writes', () => {
    expect(statusHash('{"profile":"p","hash":"0123456789abcdef","version":"1"}')).toBe('0123456789abcdef');
    for (const value of [undefined, '', 'not json', '[]', '{"hash":1}']) expect(statusHash(value)).toBeUndefined();
    // The pod's author writes the annotation: a hash of any other form (another profile's revision name, a megabyte, a space) names nothing.
    for (const hash of ['abc', 'job-0123456789abcdef', '0123456789ABCDEF', 'x victim-ns', 'f'.repeat(300_000)]) expect(statusHash(JSON.stringify({ profile: 'p', hash }))).toBeUndefined();
  });
});

describe('agentState with a staged change (canary)', () => {
  const next = `${injectedWith.container.image}-next`;
  const staged = { ...injectedWith, canary: { namespaceSelector: { matchLabels: { ring: 'canary' } }, image: next } } as AgentProfile;

  it('counts the agent as before as current, and the canary agent as current and canary, wherever the pod runs', () => {
    expect(agentState(injectedPod(), staged, [staged], () => undefined)).toEqual({ state: 'current' });
    // The same pod, injected while it got the canary: its agent has the canary image.
    const pod = injectedPod();
    const agent = arrayAt(pod, 'spec', 'containers').find((c) => (c as JsonObject)['name'] === injectedWith.container.name) as JsonObject;
    agent['image'] = next;
    expect(agentState(pod, staged, [staged], () => undefined)).toEqual({ state: 'current', canary: true });
    expect(agentState(pod, injectedWith, [injectedWith], () => undefined)).toMatchObject({ state: 'outdated' });
  });
});
