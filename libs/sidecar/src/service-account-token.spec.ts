import { describe, expect, it } from 'vitest';
import type { JsonObject } from '@outrigger/admission';
import { SERVICE_ACCOUNT_TOKEN_PATH, serviceAccountTokenMount, withServiceAccountToken } from './service-account-token.js';

const TOKEN = { name: 'kube-api-access-7xk2p', readOnly: true, mountPath: SERVICE_ACCOUNT_TOKEN_PATH };

/** A pod spec as the ServiceAccount admission plugin leaves it before the webhooks run. */
function spec(overrides: JsonObject = {}): JsonObject {
  return {
    volumes: [{ name: 'data', emptyDir: {} }, { name: 'kube-api-access-7xk2p', projected: { sources: [] } }],
    containers: [{ name: 'app', image: 'app:1', volumeMounts: [{ name: 'data', mountPath: '/data' }, { ...TOKEN }] }],
    ...overrides,
  };
}

describe('serviceAccountTokenMount', () => {
  it('is the mount the ServiceAccount plugin gave the containers', () => {
    expect(serviceAccountTokenMount(spec())).toEqual(TOKEN);
    expect(serviceAccountTokenMount(spec({ containers: [{ name: 'app', image: 'app:1' }], initContainers: [{ name: 'init', image: 'i:1', volumeMounts: [{ ...TOKEN }] }] }))).toEqual(TOKEN);
  });

  it('is nothing when the plugin mounted nothing: no token volume, or no container mounts it as the plugin does', () => {
    expect(serviceAccountTokenMount({ containers: [{ name: 'app', image: 'app:1' }] })).toBeUndefined();
    expect(serviceAccountTokenMount(spec({ containers: [{ name: 'app', image: 'app:1' }] }))).toBeUndefined();
    // A volume of that name mounted elsewhere or writable is the user's, not the plugin's.
    expect(serviceAccountTokenMount(spec({ containers: [{ name: 'app', image: 'app:1', volumeMounts: [{ ...TOKEN, mountPath: '/token' }] }] }))).toBeUndefined();
    expect(serviceAccountTokenMount(spec({ containers: [{ name: 'app', image: 'app:1', volumeMounts: [{ ...TOKEN, readOnly: false }] }] }))).toBeUndefined();
  });

  it('takes the first kube-api-access volume, as the plugin does', () => {
    const twoVolumes = spec({ volumes: [{ name: 'kube-api-access-first' }, { name: 'kube-api-access-7xk2p' }] });
    expect(serviceAccountTokenMount(twoVolumes)).toBeUndefined();
    const containers = [{ name: 'app', image: 'app:1', volumeMounts: [{ ...TOKEN, name: 'kube-api-access-first' }] }];
    expect(serviceAccountTokenMount({ ...twoVolumes, containers })).toEqual({ ...TOKEN, name: 'kube-api-access-first' });
  });
});

describe('withServiceAccountToken', () => {
  it('appends the mount, creating the list if needed, and shares no object with the argument', () => {
    const bare: JsonObject = { name: 'agent' };
    withServiceAccountToken(bare, TOKEN);
    expect(bare['volumeMounts']).toEqual([TOKEN]);
    expect((bare['volumeMounts'] as JsonObject[])[0]).not.toBe(TOKEN);
    const withMounts: JsonObject = { name: 'agent', volumeMounts: [{ name: 'config', mountPath: '/etc/agent' }] };
    withServiceAccountToken(withMounts, TOKEN);
    expect(withMounts['volumeMounts']).toEqual([{ name: 'config', mountPath: '/etc/agent' }, TOKEN]);
  });

  it('leaves a container that mounts something at the token path, or a pod without the mount, alone', () => {
    const own: JsonObject = { name: 'agent', volumeMounts: [{ name: 'my-token', mountPath: SERVICE_ACCOUNT_TOKEN_PATH }] };
    withServiceAccountToken(own, TOKEN);
    expect(own['volumeMounts']).toEqual([{ name: 'my-token', mountPath: SERVICE_ACCOUNT_TOKEN_PATH }]);
    const none: JsonObject = { name: 'agent' };
    withServiceAccountToken(none, undefined);
    expect(none).toEqual({ name: 'agent' });
  });
});
