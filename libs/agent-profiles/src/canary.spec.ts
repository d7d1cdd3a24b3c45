import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { agentFor, agentVariants } from './canary.js';
import { type LabelSelector, selectsLabels } from './label-selector.js';
import { agentProfileSchema, type AgentProfile } from './profile-schema.js';
import { profileHash } from './profile-hash.js';
import { referenceProfile } from './reference-profile.js';

const reference = referenceProfile();
const NEXT_IMAGE = `${reference.container.image.replace(/[:@].*$/, '')}:next`;
const parse = (spec: unknown): AgentProfile => agentProfileSchema.parse(spec);
/** The reference profile with a canary of a new image for namespaces labelled ring=canary. */
const staged = parse({ ...reference, canary: { namespaceSelector: { matchLabels: { ring: 'canary' } }, image: NEXT_IMAGE } });

describe('selectsLabels', () => {
  const labels = { ring: 'canary', team: 'pay' };
  it('follows metav1.LabelSelector: matchLabels and every operator', () => {
    const cases: [LabelSelector, boolean][] = [
      [{}, true],
      [{ matchLabels: { ring: 'canary' } }, true],
      [{ matchLabels: { ring: 'stable' } }, false],
      [{ matchExpressions: [{ key: 'team', operator: 'In', values: ['pay', 'shop'] }] }, true],
      [{ matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['pay'] }] }, false],
      [{ matchExpressions: [{ key: 'absent', operator: 'NotIn', values: ['x'] }] }, true],
      [{ matchExpressions: [{ key: 'ring', operator: 'Exists' }] }, true],
      [{ matchExpressions: [{ key: 'ring', operator: 'DoesNotExist' }] }, false],
      [{ matchLabels: { ring: 'canary' }, matchExpressions: [{ key: 'absent', operator: 'Exists' }] }, false],
    ];
    for (const [selector, selects] of cases) expect(selectsLabels(selector, labels), JSON.stringify(selector)).toBe(selects);
  });
});

describe('a staged agent change (canary)', () => {
  it('gives the canary agent to the namespaces its selector picks, and everyone else the agent as before', () => {
    expect(agentFor(staged, { ring: 'canary' }).container.image).toBe(NEXT_IMAGE);
    expect(agentFor(staged, { ring: 'stable' }).container.image).toBe(reference.container.image);
    expect(agentFor(reference, { ring: 'canary' })).toBe(reference);
    // The stable agent hashes as the profile did before the canary: its running pods stay current.
    expect(profileHash(agentVariants(staged).stable)).toBe(profileHash(reference));
  });

  it('promoted (its fields moved into the container, canary removed) hashes as the canary did; rolled back, as before', () => {
    const canaryHash = profileHash(agentVariants(staged).canary?.profile as AgentProfile);
    const promoted = parse({ ...reference, container: { ...reference.container, image: NEXT_IMAGE } });
    expect(profileHash(promoted)).toBe(canaryHash);
    const { canary: _, ...rolledBack } = staged;
    expect(profileHash(parse(rolledBack))).toBe(profileHash(reference));
  });

  it('holds for any change of the canary fields: the canary agent is the promoted profile', () => {
    const change = fc.record(
      {
        image: fc.constantFrom('registry.local/agent:2', 'registry.local/agent@sha256:' + 'b'.repeat(64)),
        args: fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
        env: fc.uniqueArray(fc.record({ name: fc.constantFrom('A_ONE', 'A_TWO', 'A_THREE'), value: fc.string({ maxLength: 5 }) }), { selector: (e) => e.name, maxLength: 3 }),
        resources: fc.record({ limits: fc.record({ memory: fc.constantFrom('64Mi', '128Mi') }) }),
      },
      { requiredKeys: ['image'] },
    );
    fc.assert(
      fc.property(change, (fields) => {
        const withCanary = parse({ ...reference, canary: { namespaceSelector: { matchLabels: { ring: 'canary' } }, ...fields } });
        const promoted = parse({ ...reference, container: { ...reference.container, ...fields } });
        expect(profileHash(agentVariants(withCanary).canary?.profile as AgentProfile)).toBe(profileHash(promoted));
      }),
      { numRuns: 50 },
    );
  });

  it('refuses a canary that changes nothing, and a canary env name that a parameter already sets', () => {
    expect(agentProfileSchema.safeParse({ ...reference, canary: { namespaceSelector: {} } }).error?.issues[0]?.message).toMatch(/^must change at least one of image, imagePullPolicy, command, args, env, resources$/);
    const taken = reference.parameters[0]?.env ?? '';
    const clash = agentProfileSchema.safeParse({ ...reference, canary: { namespaceSelector: {}, env: [{ name: taken, value: 'x' }] } });
    expect(clash.error?.issues.map((i) => i.path.join('.'))).toContain('canary.env.0.name');
    expect(agentProfileSchema.safeParse({ ...reference, canary: { namespaceSelector: {}, securityContext: { privileged: true } } }).success).toBe(false);
  });
});
