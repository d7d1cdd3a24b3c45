import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { agentFor, parseAgentProfile, readProfileExamples } from '@outrigger/agent-profiles';
import { injectManifests } from './manifests.js';

// The examples of the AgentProfile reference (docs/agent-profile-examples) rendered by the
// webhook's own extension, with the agent the injector picks for the namespace (agentFor: a
// canary's there): each gives an opted-in pod its agent and its pod-level parts.
const root = fileURLToPath(new URL('../../../', import.meta.url));
// Labels every selector of the examples picks.
const LABELS = { team: 'payments', environment: 'production', ring: 'canary' };

interface RenderedPod {
  readonly spec: {
    readonly containers: readonly { name: string; image: string }[];
    readonly initContainers?: readonly { name: string; image: string; restartPolicy?: string }[];
    readonly volumes?: readonly { name: string }[];
    readonly imagePullSecrets?: readonly { name: string }[];
  };
}

describe('the AgentProfile reference\'s examples', () => {
  for (const { file, text } of readProfileExamples(root)) {
    it(`${file}: injects its agent, volumes and pull secrets into an opted-in pod`, () => {
      const parsed = parseAgentProfile(YAML.parse(text));
      if (!parsed.ok) throw new Error(parsed.error);
      const profile = parsed.value;
      const annotations: Record<string, string> = { [`${profile.annotationPrefix}enable`]: 'true' };
      for (const p of profile.parameters.filter((p) => p.required)) {
        annotations[`${profile.annotationPrefix}${p.annotation}`] = p.containerName ? 'app' : p.format === 'url' ? 'http://collector.example.com:4318' : 'value';
      }
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop', annotations }, spec: { containers: [{ name: 'app', image: 'registry.example.com/app:1' }] } };
      const result = injectManifests(YAML.stringify(pod), { profiles: [agentFor(profile, LABELS)], injectorVersion: '0.0.0-test', namespaceLabels: () => LABELS });
      if (!result.ok) throw new Error(result.error);
      expect(result.value.documents.map((d) => d.decision)).toEqual(['injected']);
      const rendered = YAML.parse(result.value.yaml) as RenderedPod;
      const agent = [...rendered.spec.containers, ...(rendered.spec.initContainers ?? [])].find((c) => c.name === profile.container.name);
      expect(agent?.image).toBe(profile.canary?.image ?? profile.container.image);
      for (const volume of profile.volumes ?? []) expect(rendered.spec.volumes?.map((v) => v.name)).toContain(volume.name);
      for (const secret of profile.imagePullSecrets ?? []) expect(rendered.spec.imagePullSecrets).toContainEqual(secret);
      if (profile.holdApplicationUntilReady || profile.nativeSidecar) expect(rendered.spec.initContainers?.find((c) => c.name === profile.container.name)?.restartPolicy).toBe('Always');
    });
  }
});
