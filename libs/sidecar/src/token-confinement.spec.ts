import { describe, expect, it } from 'vitest';
import type { JsonObject } from '@outrigger/admission';
import { tokenConfinementProblem } from './token-confinement.js';

const isAgent = (name: string) => name === 'agent';
const AGENT_MOUNT = { name: 'outrigger-agent-token', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' };

function spec(overrides: JsonObject = {}): JsonObject {
  return {
    automountServiceAccountToken: false,
    volumes: [{ name: 'outrigger-agent-token', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }, { name: 'data', emptyDir: {} }],
    containers: [{ name: 'app', image: 'app:1', volumeMounts: [{ name: 'data', mountPath: '/data' }] }, { name: 'agent', image: 'agent:1', volumeMounts: [AGENT_MOUNT] }],
    ...overrides,
  };
}

describe('tokenConfinementProblem', () => {
  it('is undefined when only the agent can read a token', () => {
    expect(tokenConfinementProblem(spec(), isAgent)).toBeUndefined();
  });

  it('names what gives another container a token', () => {
    expect(tokenConfinementProblem(spec({ automountServiceAccountToken: true }), isAgent)).toMatch(/^spec\.automountServiceAccountToken is not false/);
    expect(tokenConfinementProblem(spec({ shareProcessNamespace: true }), isAgent)).toMatch(/^spec\.shareProcessNamespace is true/);
    const ownToken = spec();
    (ownToken['volumes'] as JsonObject[]).push({ name: 'kube-api-access-x', projected: { sources: [{ configMap: { name: 'c' } }, { serviceAccountToken: { path: 't' } }] } });
    expect(tokenConfinementProblem(ownToken, isAgent)).toBe("volume kube-api-access-x projects a ServiceAccount token besides the agent's token");
    // A pod certificate of a built-in signer may authenticate to the API server as the ServiceAccount; another signer's is the pod's own business.
    const certificate = (signerName: string) => {
      const withCertificate = spec();
      (withCertificate['volumes'] as JsonObject[]).push({ name: 'certs', projected: { sources: [{ podCertificate: { signerName, keyType: 'ED25519', credentialBundlePath: 'b.pem' } }] } });
      return tokenConfinementProblem(withCertificate, isAgent);
    };
    expect(certificate('kubernetes.io/kube-apiserver-client-pod')).toBe("volume certs projects a pod certificate of built-in signer kubernetes.io/kube-apiserver-client-pod besides the agent's token");
    expect(certificate('mesh.example.com/workload')).toBeUndefined();
    const initMount = spec({ initContainers: [{ name: 'init', image: 'i:1', volumeMounts: [{ ...AGENT_MOUNT, mountPath: '/t' }] }] });
    expect(tokenConfinementProblem(initMount, isAgent)).toBe("container init mounts outrigger-agent-token, the agent's token volume");
    expect(tokenConfinementProblem(initMount, (name) => name === 'agent' || name === 'init')).toBeUndefined();
  });

  it('names an ephemeral container added later that mounts the token or targets the agent (kubectl debug --target)', () => {
    const mounting = spec({ ephemeralContainers: [{ name: 'debugger', image: 'busybox', volumeMounts: [{ ...AGENT_MOUNT, mountPath: '/t' }] }] });
    expect(tokenConfinementProblem(mounting, isAgent)).toBe("container debugger mounts outrigger-agent-token, the agent's token volume");
    const targeting = spec({ ephemeralContainers: [{ name: 'debugger', image: 'busybox', targetContainerName: 'agent' }] });
    expect(tokenConfinementProblem(targeting, isAgent)).toBe("ephemeral container debugger targets the agent's container agent: it could read the agent's token");
    expect(tokenConfinementProblem(spec({ ephemeralContainers: [{ name: 'debugger', image: 'busybox', targetContainerName: 'app' }] }), isAgent)).toBeUndefined();
  });
});
