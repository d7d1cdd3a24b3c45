import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import type { HealthChecks } from '@outrigger/service';
import { rbacSyncerConfig, type RbacSyncerConfig } from '../config/rbac-syncer.config.js';
import { SyncerController } from '../controller/syncer-controller.js';

@Injectable()
export class RbacSyncerHealth implements HealthChecks {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly syncer: SyncerController,
    @Inject(rbacSyncerConfig.KEY) private readonly config: RbacSyncerConfig,
  ) {}

  /** Fails when the watches have been broken too long (a restart may help). */
  liveness() {
    return [() => this.watch()];
  }

  /** The first full sync is done, the watches are not dead, the exec guard is in force. */
  readiness() {
    return [() => this.synced(), () => this.watch(), () => this.execGuard()];
  }

  /** Ready once pods, namespaces and our bindings have been listed completely at least once. */
  synced() {
    const check = this.indicators.check('sync');
    const status = this.syncer.status();
    return status.synced ? check.up({ leader: status.leader, profiles: status.profiles, ...(status.namespaces ? { namespaces: status.namespaces } : {}) }) : check.down({ reason: 'first full list of pods and namespaces not done yet' });
  }

  /**
   * Not ready while a profile binds cluster-wide and the exec guard is not in force (its bindings
   * are kept empty meanwhile). Readiness only: a restart cannot bring the guard back.
   */
  execGuard() {
    const check = this.indicators.check('execGuard');
    const problem = this.syncer.status().execGuardProblem;
    return problem === undefined ? check.up() : check.down({ reason: problem });
  }

  /** Unhealthy when the view has been incomplete (watch broken, relists failing) for too long. */
  watch() {
    const check = this.indicators.check('watch');
    const status = this.syncer.status();
    if (status.incompleteForMs > this.config.unhealthyAfterMs) {
      const errors = Object.entries(status.watches).map(([r, s]) => `${r}: ${s?.lastError ?? 'ok'}`);
      return check.down({ reason: `view incomplete for ${Math.round(status.incompleteForMs / 1000)}s`, errors });
    }
    return check.up({ viewComplete: status.viewComplete });
  }
}
