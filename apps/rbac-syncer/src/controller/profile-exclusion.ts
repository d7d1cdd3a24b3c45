import { Semaphore } from 'async-mutex';
import type { SyncKey } from './sync-key.js';

/**
 * Which keys of one profile may be reconciled at once: its namespaces' steps and its status side by
 * side (each writes only its own namespace's binding, or the status), its whole-profile step alone
 * (it plans and writes every namespace). A weighted semaphore per profile: a namespace or status step
 * takes one unit, the whole-profile step all of them; waiters are served in order, so a waiting
 * whole-profile step is not starved by the namespace steps queued after it.
 */
export class ProfileExclusion {
  private readonly semaphores = new Map<string, Semaphore>();

  constructor(private readonly width: number) {}

  run<T>(key: SyncKey, work: () => Promise<T>): Promise<T> {
    let semaphore = this.semaphores.get(key.profile);
    if (!semaphore) this.semaphores.set(key.profile, (semaphore = new Semaphore(this.width)));
    return semaphore.runExclusive(work, key.step === 'profile' ? this.width : 1);
  }
}
