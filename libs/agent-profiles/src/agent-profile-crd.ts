import YAML from 'yaml';
import { z } from 'zod';
import { AGENT_PROFILE_API_VERSION, AGENT_PROFILE_KIND } from './agent-profile-object.js';
import { celRule, celString } from './crd-meta.js';
import { POD_SECURITY_LEVELS } from './pod-security.js';
import { DNS_LABEL, DNS_LABEL_MAX } from '@outrigger/admission';
import { agentProfileSchema } from './profile-schema.js';

export const AGENT_PROFILE_GROUP = AGENT_PROFILE_API_VERSION.split('/')[0] as string;
export const AGENT_PROFILE_VERSION = AGENT_PROFILE_API_VERSION.split('/')[1] as string;
export const AGENT_PROFILE_PLURAL = 'agentprofiles';
/** Where the generated CRD lives, relative to the repository root. */
export const AGENT_PROFILE_CRD_FILE = 'deploy/base/crd/agentprofiles.outrigger.dev.yaml';

/** The CRD as the file in deploy/ holds it. */
export function agentProfileCrdYaml(): string {
  return `# Generated from libs/agent-profiles/src/profile-schema.ts by \`npm run generate:crd\`; do not edit.\n${YAML.stringify(agentProfileCrd(), { lineWidth: 0 })}`;
}

// What only the services check (zod), because OpenAPI and CEL cannot say it:
// - a parameter's `pattern` compiles as a JavaScript regular expression, and its `default` matches it
//   (the API server's regexes are RE2, a different dialect);
// - a `default` with `format: url` is an http(s) URL (CEL has no URL parser for this);
// - every name in `dangerouslyAllowEscalation` is needed by some rule;
// - profiles do not clash with each other (prefix, container, role): a property of the set, which
//   resolveProfiles settles (the older profile wins).

type Schema = Record<string, unknown>;

/**
 * The AgentProfile CRD, generated from agentProfileSchema (the services' own schema and its
 * `.meta()` OpenAPI keywords and CEL rules), so the two validators never drift apart.
 */
export function agentProfileCrd(): Schema {
  const { properties, required, ...profile } = structural(z.toJSONSchema(agentProfileSchema, { io: 'input', reused: 'inline', target: 'openapi-3.0' }) as Schema);
  const { name: _name, ...specProperties } = properties as Record<string, Schema>;
  const spec = { ...profile, properties: specProperties, required: (required as string[]).filter((field) => field !== 'name') };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${AGENT_PROFILE_PLURAL}.${AGENT_PROFILE_GROUP}` },
    spec: {
      group: AGENT_PROFILE_GROUP,
      scope: 'Cluster',
      names: { kind: AGENT_PROFILE_KIND, listKind: `${AGENT_PROFILE_KIND}List`, plural: AGENT_PROFILE_PLURAL, singular: 'agentprofile', shortNames: ['agp'], categories: ['outrigger'] },
      versions: [
        {
          name: AGENT_PROFILE_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Prefix', type: 'string', jsonPath: '.spec.annotationPrefix' },
            { name: 'Image', type: 'string', jsonPath: '.spec.container.image' },
            { name: 'Binding', type: 'string', jsonPath: '.spec.rbac.binding.kind' },
            { name: 'Accepted', type: 'string', jsonPath: '.status.conditions[?(@.type=="Accepted")].status' },
            { name: 'Synced', type: 'string', jsonPath: '.status.conditions[?(@.type=="Synced")].status' },
            { name: 'Subjects', type: 'integer', jsonPath: '.status.boundSubjects' },
            // Live opted-in pods by the agent they run, as a Deployment shows UP-TO-DATE.
            { name: 'Current', type: 'integer', jsonPath: '.status.agents.current' },
            { name: 'Outdated', type: 'integer', jsonPath: '.status.agents.outdated' },
            { name: 'Missing', type: 'integer', jsonPath: '.status.agents.missing' },
            { name: 'Canary', type: 'integer', jsonPath: '.status.agents.canary', priority: 1 },
            { name: 'Namespaces', type: 'integer', jsonPath: '.status.namespaces', priority: 1 },
            { name: 'Pod-Security', type: 'string', jsonPath: '.status.agentPodSecurity', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'An agent Outrigger injects into pods that opt in by annotation, and the RBAC its ServiceAccounts get.',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec,
                status: STATUS,
              },
              'x-kubernetes-validations': [
                celRule(`self.metadata.name.size() <= ${DNS_LABEL_MAX} && self.metadata.name.matches(${celString(DNS_LABEL.source)})`, 'metadata.name must be a DNS label (lowercase letters, digits and "-", at most 63)'),
              ],
            },
          },
        },
      ],
    },
  };
}

/** Written by the rbac-syncer (apps/rbac-syncer/src/desired/profile-status.ts). */
const STATUS: Schema = {
  type: 'object',
  properties: {
    observedGeneration: { type: 'integer', format: 'int64' },
    boundSubjects: { type: 'integer', format: 'int32' },
    /** The strictest Pod Security Standard the agent container meets (of the generation in force). */
    agentPodSecurity: { type: 'string', enum: [...POD_SECURITY_LEVELS] },
    /** The namespaces the profile applies in: labelled for injection and picked by spec.namespaceSelector. */
    namespaces: { type: 'integer', format: 'int32' },
    /** Live opted-in pods in labelled namespaces, by the agent they run. */
    agents: {
      type: 'object',
      properties: {
        current: { type: 'integer', format: 'int32' },
        outdated: { type: 'integer', format: 'int32' },
        missing: { type: 'integer', format: 'int32' },
        /** While spec.canary stages a change: of the current pods, those running its agent. */
        canary: { type: 'integer', format: 'int32' },
        /** The outdated pods by the spec that injected them (the agent revision's name, <profile>-<hash>), most pods first. */
        outdatedRevisions: {
          type: 'array',
          maxItems: 16,
          items: { type: 'object', required: ['revision', 'pods'], properties: { revision: { type: 'string', maxLength: 253 }, pods: { type: 'integer', format: 'int32' } } },
        },
      },
    },
    conditions: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: {
        type: 'object',
        required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
        properties: {
          type: { type: 'string', maxLength: 316 },
          status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
          reason: { type: 'string', maxLength: 1024 },
          message: { type: 'string', maxLength: 32768 },
          lastTransitionTime: { type: 'string', format: 'date-time' },
          observedGeneration: { type: 'integer', format: 'int64' },
        },
      },
    },
  },
};

/**
 * JSON Schema from zod → a structural schema: no `additionalProperties: false` next to properties
 * (the API server prunes and kubectl's strict field validation refuses unknown fields), a loose
 * object keeps its unknown fields, no JavaScript-only integer bounds, no `propertyNames`.
 */
export function structural(node: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema' || key === 'propertyNames') continue;
    if (key === 'additionalProperties' && (value === false || (isSchema(value) && Object.keys(value).length === 0 && node['properties']))) {
      // {} next to properties: a loose object (securityContext), kept open for newer Kubernetes fields.
      if (value !== false) out['x-kubernetes-preserve-unknown-fields'] = true;
      continue;
    }
    if ((key === 'maximum' && value === Number.MAX_SAFE_INTEGER) || (key === 'minimum' && value === Number.MIN_SAFE_INTEGER)) continue;
    out[key] = transform(value);
  }
  // The quantity's own anyOf replaces zod's union (see profile-schema.ts); the int-or-string form has no type.
  if (out['x-kubernetes-int-or-string'] === true) delete out['type'];
  return out;
}

function transform(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(transform);
  return isSchema(value) ? structural(value) : value;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
