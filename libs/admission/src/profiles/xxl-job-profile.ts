import type { AgentProfile } from './profile-schema.js';

/**
 * The reference profile, used when no profiles file is configured: an XXL-JOB executor agent that
 * runs jobs by exec'ing into the pod's target container.
 */
export const XXL_JOB_PROFILE: AgentProfile = {
  name: 'xxl-job',
  annotationPrefix: 'xxl-agent/',
  container: {
    name: 'xxl-agent',
    image: 'ghcr.io/outrigger/xxl-agent:1.0.0',
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http-xxl-agent', containerPort: 9999, protocol: 'TCP' }],
    resources: {
      requests: { cpu: '10m', memory: '32Mi' },
      limits: { cpu: '200m', memory: '128Mi' },
    },
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
  },
  parameters: [
    { annotation: 'job-addr', env: 'XXL_JOB_ADDR', required: true, format: 'url', containerName: false },
    { annotation: 'target-container', env: 'CONTAINER_NAME', required: true, containerName: true },
    { annotation: 'job-name', env: 'XXL_JOB_NAME', required: true, containerName: false },
  ],
  fieldEnv: [
    { env: 'NAMESPACE', fieldPath: 'metadata.namespace' },
    { env: 'POD_NAME', fieldPath: 'metadata.name' },
  ],
  nativeSidecar: false,
  rbac: {
    clusterRole: 'xxl-agent-exec',
    binding: { kind: 'ClusterRoleBinding', name: 'xxl-agent-exec' },
    rules: [
      { apiGroups: [''], resources: ['pods/exec'], verbs: ['create', 'get'] },
    ],
  },
};

/** The same profile as a profiles file, the format PROFILES_FILE points at. */
export const XXL_JOB_PROFILE_YAML = `# Outrigger agent profiles. Pods opt in with <annotationPrefix>enable: "true".
profiles:
  - name: xxl-job
    annotationPrefix: xxl-agent/
    container:
      name: xxl-agent
      image: ghcr.io/outrigger/xxl-agent:1.0.0
      imagePullPolicy: IfNotPresent
      ports:
        - name: http-xxl-agent
          containerPort: 9999
          protocol: TCP
      resources:
        requests: { cpu: 10m, memory: 32Mi }
        limits: { cpu: 200m, memory: 128Mi }
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities: { drop: [ALL] }
        seccompProfile: { type: RuntimeDefault }
    parameters:
      - annotation: job-addr          # xxl-agent/job-addr
        env: XXL_JOB_ADDR
        required: true
        format: url
      - annotation: target-container  # must name one of the pod's containers
        env: CONTAINER_NAME
        required: true
        containerName: true
      - annotation: job-name
        env: XXL_JOB_NAME
        required: true
    fieldEnv:
      - { env: NAMESPACE, fieldPath: metadata.namespace }
      - { env: POD_NAME, fieldPath: metadata.name }
    nativeSidecar: false
    rbac:
      clusterRole: xxl-agent-exec
      binding: { kind: ClusterRoleBinding, name: xxl-agent-exec }
      rules:
        - { apiGroups: [""], resources: [pods/exec], verbs: [create, get] }
`;
