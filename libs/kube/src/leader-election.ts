import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { classifyApiError, type ApiErrorInfo } from './api-error.js';
import { resourcePath } from './api-path.js';
import { kubeJson, type KubeClient, type KubeRequest } from './kube-request.js';
import { leaseDecision, type LeaseRecord } from './lease-decision.js';

export interface LeaderElectionOptions {
  /** Namespace and name of the coordination.k8s.io/v1 Lease all candidates share. */
  readonly namespace: string;
  readonly name: string;
  /** Unique per process; default: $POD_NAME or the hostname, plus a random suffix. */
  readonly identity?: string;
  /** How long a lease holds without renewal before others may take it; 15 s by default. */
  readonly leaseDurationMs?: number;
  /** A leader that could not renew for this long stops leading; must be < leaseDuration; 10 s by default. */
  readonly renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew; 2 s by default. */
  readonly retryPeriodMs?: number;
  /** On stop(), clear the holder so a successor takes over at once instead of after expiry; true by default. */
  readonly releaseOnStop?: boolean;
  readonly onStartedLeading?: () => void;
  /** Stop leader work here. Awaited by stop() before the lease is released. */
  readonly onStoppedLeading?: () => void | Promise<void>;
  /** A different holder was observed (including ourselves). */
  readonly onNewLeader?: (identity: string) => void;
  /** Failed API calls (they are retried). */
  readonly onError?: (error: unknown, info: ApiErrorInfo) => void;
  /**
   * Annotations the holder sets on the Lease with each acquire and renewal, so that readers see
   * what the leader acts on without reaching its pod; removed on release. Given the holder's identity.
   */
  readonly annotations?: (identity: string) => Readonly<Record<string, string>>;
}

/** The coordination.k8s.io/v1 Lease fields the election reads and writes; the rest is kept as it is. */
interface Lease {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly resourceVersion?: string; readonly annotations?: Readonly<Record<string, string>> };
  readonly spec?: LeaseRecord & { readonly leaseTransitions?: number; readonly [field: string]: unknown };
}

/** The pod (or host) part of an identity LeaderElector formed: `<pod>_<random hex>`. */
export function identityPod(identity: string): string {
  return identity.replace(/_[0-9a-f]+$/, '');
}

/** metav1.MicroTime: RFC 3339 with six fractional digits. */
const microTime = (): string => new Date().toISOString().replace(/Z$/, '000Z');

/**
 * Lease-based leader election in the manner of client-go: acquire only a free or expired lease,
 * every write guarded by resourceVersion (a conflict means someone else won), renew every
 * retryPeriod, and give up leadership when renewals have failed for renewDeadline, which is
 * before the lease expires for the others, so two leaders never overlap.
 */
export class LeaderElector {
  readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private leading = false;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private deadline: NodeJS.Timeout | undefined;
  /** The last lease record we saw, and when (our clock) it last changed. */
  private observed: { key: string; atMs: number } | undefined;
  private lastHolder: string | undefined;
  /** The annotation keys this candidate has written, which release() removes. */
  private readonly published = new Set<string>();

  constructor(
    private readonly kc: KubeClient,
    private readonly options: LeaderElectionOptions,
  ) {
    this.identity = options.identity ?? `${process.env.POD_NAME || hostname()}_${randomBytes(4).toString('hex')}`;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (this.renewDeadlineMs >= this.leaseDurationMs) throw new Error('renewDeadline must be shorter than leaseDuration');
    if (this.retryPeriodMs >= this.renewDeadlineMs) throw new Error('retryPeriod must be shorter than renewDeadline');
  }

  isLeader(): boolean {
    return this.leading;
  }

  start(): this {
    if (this.loop) throw new Error('LeaderElector already started');
    this.loop = this.run();
    return this;
  }

  /** Stops competing; a leader first stops leading (awaiting the callback), then releases the lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await this.stopLeading();
    if (this.lastHolder === this.identity && (this.options.releaseOnStop ?? true)) await this.release();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const attemptStartedMs = Date.now();
      const holding = await this.tryAcquireOrRenew();
      if (this.stopped) break;
      if (holding) {
        this.armDeadline(attemptStartedMs);
        if (!this.leading) {
          this.leading = true;
          this.safely(() => this.options.onStartedLeading?.());
        }
      } else if (this.leading && Date.now() - attemptStartedMs >= this.renewDeadlineMs) {
        await this.stopLeading(); // the deadline timer usually got here first
      }
      await this.sleep(this.leading ? this.retryPeriodMs : this.retryPeriodMs * (1 + 0.2 * Math.random()));
    }
  }

  /** One read-decide-write round; true if we hold the lease afterwards. Never throws. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name } = this.options;
    const durationSeconds = Math.ceil(this.leaseDurationMs / 1_000);
    try {
      let lease: Lease;
      try {
        lease = await this.call<Lease>({ path: this.leasePath() });
      } catch (error) {
        if (classifyApiError(error).kind !== 'notFound') throw error;
        const spec = { holderIdentity: this.identity, leaseDurationSeconds: durationSeconds, acquireTime: microTime(), renewTime: microTime(), leaseTransitions: 0 };
        const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: this.annotated({ name, namespace }), spec };
        await this.call({ method: 'POST', path: resourcePath({ apiVersion: 'coordination.k8s.io/v1', resource: 'leases', namespace }), body });
        this.noteHolder(this.identity);
        return true;
      }
      const spec = lease.spec ?? {};
      this.observe(lease);
      this.noteHolder(spec.holderIdentity);
      const decision = leaseDecision(spec, this.identity, this.observed?.atMs ?? Date.now(), Date.now());
      if (decision === 'wait') return false;
      const taking = decision === 'take';
      const body: Lease = {
        ...lease,
        metadata: this.annotated(lease.metadata ?? {}),
        spec: {
          ...spec,
          holderIdentity: this.identity,
          leaseDurationSeconds: durationSeconds,
          renewTime: microTime(),
          ...(taking ? { acquireTime: microTime(), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 } : {}),
        },
      };
      // resourceVersion in metadata makes this a compare-and-swap: 409 if anybody wrote in between.
      await this.call({ method: 'PUT', path: this.leasePath(), body });
      this.noteHolder(this.identity);
      return true;
    } catch (error) {
      const info = classifyApiError(error);
      // Losing a race (409 on replace, AlreadyExists on create) is normal, not an error.
      if (info.kind !== 'conflict') this.safely(() => this.options.onError?.(error, info));
      return false;
    }
  }

  /** Clears the holder if it is still us, so the next candidate need not wait for expiry. */
  private async release(): Promise<void> {
    try {
      const lease = await this.call<Lease>({ path: this.leasePath() });
      if (lease.spec?.holderIdentity !== this.identity) return;
      const spec = { ...lease.spec, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: microTime() };
      const annotations = Object.fromEntries(Object.entries(lease.metadata?.annotations ?? {}).filter(([key]) => !this.published.has(key)));
      await this.call({ method: 'PUT', path: this.leasePath(), body: { ...lease, metadata: { ...lease.metadata, annotations }, spec } });
    } catch (error) {
      this.safely(() => this.options.onError?.(error, classifyApiError(error)));
    }
  }

  /** Leadership ends renewDeadline after the start of the last successful renewal, even if a request hangs. */
  private armDeadline(renewStartedMs: number): void {
    clearTimeout(this.deadline);
    const remaining = renewStartedMs + this.renewDeadlineMs - Date.now();
    this.deadline = setTimeout(() => void this.stopLeading(), Math.max(0, remaining));
  }

  private async stopLeading(): Promise<void> {
    clearTimeout(this.deadline);
    this.deadline = undefined;
    if (!this.leading) return;
    this.leading = false;
    try {
      await this.options.onStoppedLeading?.();
    } catch (error) {
      this.safely(() => this.options.onError?.(error, classifyApiError(error)));
    }
  }

  /** `metadata` with our annotations over its own; its resourceVersion stays, so the write is still a compare-and-swap. */
  private annotated<M extends NonNullable<Lease['metadata']>>(metadata: M): M {
    let ours: Readonly<Record<string, string>> | undefined;
    try {
      ours = this.options.annotations?.(this.identity);
    } catch (error) {
      // Renewing matters more than what the annotations say: the lease is written without them.
      this.safely(() => this.options.onError?.(error, classifyApiError(error)));
    }
    if (!ours) return metadata;
    for (const key of Object.keys(ours)) this.published.add(key);
    return { ...metadata, annotations: { ...metadata.annotations, ...ours } };
  }

  private leasePath(): string {
    const { namespace, name } = this.options;
    return resourcePath({ apiVersion: 'coordination.k8s.io/v1', resource: 'leases', namespace, name });
  }

  /** A request hanging on a dead connection must not stall the loop past the renew deadline. */
  private call<T = unknown>(request: KubeRequest): Promise<T> {
    return kubeJson<T>(this.kc, { ...request, timeoutMs: this.renewDeadlineMs });
  }

  private observe(lease: Lease): void {
    const key = `${lease.metadata?.resourceVersion}`;
    if (this.observed?.key !== key) this.observed = { key, atMs: Date.now() };
  }

  private noteHolder(holder: string | undefined): void {
    if (holder && holder !== this.lastHolder) {
      this.lastHolder = holder;
      this.safely(() => this.options.onNewLeader?.(holder));
    }
  }

  private safely(callback: () => void): void {
    try {
      callback();
    } catch {
      // a consumer's callback must not break the election loop
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((done) => {
      const timer = setTimeout(done, ms);
      this.wake = () => {
        clearTimeout(timer);
        done();
      };
    });
  }
}
