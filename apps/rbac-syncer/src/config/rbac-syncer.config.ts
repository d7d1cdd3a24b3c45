import { registerAs, type ConfigType } from '@nestjs/config';
import { INSTALL_NAMES } from '@outrigger/install';
import { envField, leaseSettings, parseServiceEnv, serviceEnv } from '@outrigger/service';
import { SPEC_CHANGE_LAG } from '@outrigger/sidecar';
import { z } from 'zod';

/** The largest cap: that many subjects of the longest names still fit one object in etcd (see binding-size.spec.ts). */
export const MAX_SUBJECTS_CEILING = 3_000;

const schema = z.object({
  ...serviceEnv({ leaseName: INSTALL_NAMES.rbacSyncer, namespace: INSTALL_NAMES.namespace }),
  PORT: envField.port(8080),
  /** AgentProfile documents (local runs, tests). Unset: AgentProfiles are watched through the API. */
  PROFILES_FILE: z.string().optional(),
  /** How long a subject stays bound after its last opted-in pod went away. */
  GRACE: envField.duration('60s'),
  /**
   * How long a ServiceAccount removed from a binding stays listed on it for the exec guard: longer
   * than any request spends between its authorization and admission (the webhooks it passes first
   * time out within 30 s each).
   */
  REVOKED_KEEP: envField.duration('5m'),
  /**
   * How long after a profile's agent spec is replaced a pod created with the earlier spec's agent is
   * still bound: the time the injector may take to see the edit (its watch restarts within its
   * WATCH_DEAD). Later, only a pod written by hand while the webhook was not called carries it.
   */
  [SPEC_CHANGE_LAG.setting]: envField.duration(SPEC_CHANGE_LAG.fallback),
  /** Every profile is reconciled at least this often, events or not. */
  RESYNC: envField.duration('5m'),
  /** A watch without event or bookmark for this long is restarted. */
  WATCH_DEAD: envField.duration('150s'),
  /**
   * The ValidatingAdmissionPolicy and its binding (same name) that confine cluster-wide bound
   * agents to their own pod; its bindings stay empty while they are not in force.
   */
  EXEC_GUARD_NAME: z.string().min(1).default(INSTALL_NAMES.execGuard),
  /** Pods per page of the initial list: whole pods are parsed a page at a time, so this bounds that peak. */
  POD_PAGE_SIZE: z.coerce.number().int().min(1).max(10_000).default(100),
  /**
   * How the pods' complete state is read: `stream`, a watch with sendInitialEvents (WatchList,
   * from the API server's watch cache one pod at a time; pages where the API server refuses it),
   * or `pages` of POD_PAGE_SIZE.
   */
  POD_LIST: z.enum(['pages', 'stream']).default('stream'),
  /**
   * How pods are encoded on their watches: `protobuf` (the API server encodes it several times
   * faster than JSON, most of a cold start at 100 000s of pods) or `json`. List pages are JSON.
   */
  POD_ENCODING: z.enum(['protobuf', 'json']).default('protobuf'),
  /**
   * At most this many ServiceAccounts are bound per namespace and profile: one namespace cannot
   * grow its binding without bound (it holds only its own subjects; the rest wait, reported on the status).
   */
  MAX_SUBJECTS_PER_NAMESPACE: z.coerce.number().int().min(1).max(MAX_SUBJECTS_CEILING).default(1_000),
  /** /healthz fails when the view has been incomplete this long. */
  UNHEALTHY_AFTER: envField.duration('5m'),
});

export const rbacSyncerConfig = registerAs('rbacSyncer', () => {
  // Strict: a retired or mistyped variable stops startup, named (libs/service strict-settings.ts).
  const env = parseServiceEnv(schema);
  return {
    port: env.PORT,
    profilesFile: env.PROFILES_FILE,
    /** Never bound. */
    ownNamespace: env.POD_NAMESPACE,
    graceMs: env.GRACE,
    revokedKeepMs: env.REVOKED_KEEP,
    specChangeLagMs: env[SPEC_CHANGE_LAG.setting],
    kubeconfig: env.KUBECONFIG,
    resyncMs: env.RESYNC,
    lease: leaseSettings(env),
    watchDeadMs: env.WATCH_DEAD,
    unhealthyAfterMs: env.UNHEALTHY_AFTER,
    execGuardName: env.EXEC_GUARD_NAME,
    podPageSize: env.POD_PAGE_SIZE,
    podStreamingList: env.POD_LIST === 'stream',
    podProtobuf: env.POD_ENCODING === 'protobuf',
    maxPerNamespace: env.MAX_SUBJECTS_PER_NAMESPACE,
  };
});

export type RbacSyncerConfig = ConfigType<typeof rbacSyncerConfig>;
