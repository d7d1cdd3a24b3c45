import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import type { HealthChecks } from '@outrigger/service';
import { RotationController } from '../controller/rotation-controller.js';

@Injectable()
export class CertManagerHealth implements HealthChecks {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly controller: RotationController,
  ) {}

  /** The process serves requests. */
  liveness() {
    return [];
  }

  /** The certificates the injector and the API server depend on are in place. */
  readiness() {
    return [() => this.certificates()];
  }

  /** The serving Secret exists, stays valid long enough and verifies against every managed caBundle. */
  certificates() {
    const check = this.indicators.check('certificates');
    const { ready, reasons } = this.controller.readiness();
    const observedAt = this.controller.observation()?.at.toISOString();
    return ready ? check.up({ observedAt, leader: this.controller.isLeader() }) : check.down({ reasons, observedAt });
  }
}
