import { Inject, Injectable, Logger } from '@nestjs/common';
import { type AdmissionReviewReply, allowedResponse, deniedResponse, err, type Extension, ok, parseAdmissionReview, parseJsonBody, protectedNamespacesFor, type Result, reviewResponse, type ReviewResult } from '@outrigger/admission';
import { agentFor, type AgentProfile, agentVariants, profileHash } from '@outrigger/agent-profiles';
import { sidecarExtension } from '@outrigger/sidecar';
import { injectorConfig, type InjectorConfig } from '../config/injector.config.js';
import { INJECTOR_VERSION } from '../config/version.js';
import { InjectorMetrics, type AdmissionOutcome } from '../metrics/injector.metrics.js';
import { InjectionNamespacesService } from '../namespaces/injection-namespaces.service.js';
import { ProfilesService } from '../profiles/profiles.service.js';

const JSON_CONTENT_TYPE = /^application\/json\s*(;|$)/i;

/**
 * The effectful shell around the pure admission core: raw body in, AdmissionReview reply (or a
 * 4xx reason) out, with metrics and logs. The extensions are rebuilt only when profiles change.
 */
@Injectable()
export class AdmissionService {
  private readonly logger = new Logger(AdmissionService.name);
  private inForce: readonly AgentProfile[] = [];
  /** By the hashes of the agents a namespace gets: one extension per combination of staged changes. */
  private readonly extensions = new Map<string, readonly Extension[]>();
  private readonly build: (agents: readonly AgentProfile[]) => readonly Extension[];

  constructor(
    @Inject(injectorConfig.KEY) config: InjectorConfig,
    private readonly metrics: InjectorMetrics,
    private readonly profiles: ProfilesService,
    private readonly injectionNamespaces: InjectionNamespacesService,
  ) {
    const protectedNamespaces = protectedNamespacesFor(config.ownNamespace);
    const namespacePodSecurity = (namespace: string) => injectionNamespaces.enforced(namespace);
    const namespaceAnnotations = (namespace: string) => injectionNamespaces.annotations(namespace);
    const namespaceLabels = (namespace: string) => injectionNamespaces.labels(namespace);
    this.build = (agents) => [sidecarExtension({ profiles: agents, injectorVersion: INJECTOR_VERSION, protectedNamespaces, namespacePodSecurity, namespaceAnnotations, namespaceLabels })];
    profiles.onChange(({ profiles: current }) => {
      this.inForce = current;
      this.extensions.clear();
    });
  }

  /** The extensions for a pod of `namespace`: each profile's agent as staged for that namespace (see agentFor). */
  private extensionsFor(namespace: string): readonly Extension[] {
    const labels = this.injectionNamespaces.labels(namespace);
    const agents = this.inForce.map((profile) => (labels ? agentFor(profile, labels) : agentVariants(profile).stable));
    const key = agents.map(profileHash).join(' ');
    let extensions = this.extensions.get(key);
    if (!extensions) this.extensions.set(key, (extensions = this.build(agents)));
    return extensions;
  }

  /** Answers one POST /mutate. An error result means HTTP 400 with that message. */
  review(contentType: string | undefined, body: unknown): Result<AdmissionReviewReply> {
    const started = process.hrtime.bigint();
    if (!contentType || !JSON_CONTENT_TYPE.test(contentType)) {
      return this.invalid(`content-type must be application/json, got ${contentType ? JSON.stringify(contentType.slice(0, 100)) : 'none'}`);
    }
    if (!(body instanceof Uint8Array)) return this.invalid('body: is empty');
    const json = parseJsonBody(body);
    if (!json.ok) return this.invalid(json.error);
    const review = parseAdmissionReview(json.value);
    if (!review.ok) return this.invalid(review.error);

    // Not knowing the profiles would silently drop agents, and not knowing the namespaces would drop
    // their defaults, canaries and Pod Security check: refuse, retryably (the webhook only sees
    // labelled namespaces; failurePolicy Fail would refuse them too).
    const unready = this.profiles.current() ? this.injectionNamespaces.notReadyReason() : this.profiles.notLoadedReason();
    if (unready !== undefined) {
      this.metrics.requests.inc({ outcome: 'unready' });
      return ok(deniedResponse(review.value, { code: 503, message: `outrigger injector: ${unready}; retry shortly` }));
    }
    let outcome: ReturnType<typeof reviewResponse>;
    try {
      outcome = reviewResponse(review.value, this.extensionsFor(review.value.request.namespace ?? ''));
    } catch (error) {
      // Last resort: the core never throws by design; if it does, admit unchanged rather than 5xx
      // (with failurePolicy Fail a 5xx would block the pod for nothing the user can fix).
      this.logger.error(`admitted pod unchanged after an unexpected error (uid ${review.value.request.uid}): ${String(error)}`);
      this.metrics.requests.inc({ outcome: 'error' });
      return ok(allowedResponse(review.value, { warnings: ['outrigger: pod admitted without mutation after an internal error; see the injector logs'] }));
    }
    if (outcome.failure) {
      const where = outcome.failure.extension ?? 'patch check';
      const done = outcome.mutation?.outcome === 'denied' ? 'refused a pod an extension claims' : 'admitted pod unchanged';
      this.logger.error(`${done} after an internal error in ${where} (uid ${review.value.request.uid}): ${String(outcome.failure.error)}`);
    }
    this.metrics.requests.inc({ outcome: OUTCOMES[outcome.result] });
    this.metrics.mutationSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
    return ok(outcome.reply);
  }

  private invalid(message: string): Result<never> {
    this.metrics.requests.inc({ outcome: 'invalid' });
    return err(message);
  }
}

const OUTCOMES: Record<ReviewResult, AdmissionOutcome> = { mutated: 'injected', skipped: 'skipped', denied: 'denied', failed: 'error' };
