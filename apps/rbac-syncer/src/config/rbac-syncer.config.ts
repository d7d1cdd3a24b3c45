import { registerAs, type ConfigType } from '@nestjs/config';
import { envField, parseEnv } from '@outrigger/service';
import { z } from 'zod';

const schema = z.object({
  PORT: envField.port(8080),
  /** AgentProfile documents (local runs, tests). Unset: AgentProfiles are watched through the API. */
  PROFILES_FILE: z.string().optional(),
  /** The syncer's own namespace: never bound; the Lease lives here unless LEASE_NAMESPACE says otherwise. */
  POD_NAMESPACE: z.string().min(1).default('outrigger-system'),
  /** How long a subject stays bound after its last opted-in pod went away. */
  GRACE_SECONDS: z.coerce.number().min(0).default(60),
  /** Unset: $KUBECONFIG, else in-cluster. */
  KUBECONFIG: z.string().optional(),
  /** Every profile is reconciled at least this often, events or not. */
  RESYNC_SECONDS: envField.seconds(300),
  LEASE_NAME: z.string().min(1).default('outrigger-rbac-syncer'),
  LEASE_NAMESPACE: z.string().optional(),
  LEASE_DURATION_SECONDS: envField.seconds(15),
  /** A watch without event or bookmark for this long is restarted. */
  WATCH_DEAD_SECONDS: envField.seconds(150),
  /**
   * The ValidatingAdmissionPolicy and its binding (same name) that confine cluster-wide bound
   * agents to their own namespace; ClusterRoleBindings stay empty while they are not in force.
   */
  EXEC_GUARD_NAME: z.string().min(1).default('outrigger-agent-exec-guard'),
  /** /healthz fails when the view has been incomplete this long. */
  UNHEALTHY_AFTER_SECONDS: envField.seconds(300),
});

export const rbacSyncerConfig = registerAs('rbacSyncer', () => {
  const env = parseEnv(schema);
  return {
    port: env.PORT,
    profilesFile: env.PROFILES_FILE,
    ownNamespace: env.POD_NAMESPACE,
    graceMs: env.GRACE_SECONDS * 1000,
    kubeconfig: env.KUBECONFIG,
    resyncMs: env.RESYNC_SECONDS * 1000,
    lease: {
      name: env.LEASE_NAME,
      namespace: env.LEASE_NAMESPACE ?? env.POD_NAMESPACE,
      durationMs: env.LEASE_DURATION_SECONDS * 1000,
    },
    watchDeadMs: env.WATCH_DEAD_SECONDS * 1000,
    unhealthyAfterMs: env.UNHEALTHY_AFTER_SECONDS * 1000,
    execGuardName: env.EXEC_GUARD_NAME,
  };
});

export type RbacSyncerConfig = ConfigType<typeof rbacSyncerConfig>;
