import { readFileSync } from 'node:fs';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AGENT_PROFILE_API_VERSION, AGENT_PROFILE_PLURAL, type AgentProfile, agentProfileEntry, type AgentProfileEntry, ProfileSource } from '@outrigger/agent-profiles';
import { Controller, type KubeClient, resourcePath, type Reflector } from '@outrigger/kube';
import { KUBE_CLIENT } from '@outrigger/service';
import { injectorConfig, type InjectorConfig } from '../config/injector.config.js';
import { InjectorMetrics } from '../metrics/injector.metrics.js';
import { watchFiles } from '../tls/file-watch.js';

const PROFILES_KEY = 'profiles';

export interface LoadedProfiles {
  readonly profiles: readonly AgentProfile[];
  /** The file, or `AgentProfiles` (the API). */
  readonly source: string;
}

/**
 * The agent profiles in force, from one of two sources:
 * - the AgentProfile API (PROFILES_FILE unset): listed and watched; a new or changed profile is in
 *   force within a second. Until the first list completes the injector is not ready and refuses
 *   opted-in pods with a reason; if the API goes away later, the last known profiles stay.
 * - PROFILES_FILE (local runs, tests): read at startup (a bad file stops startup with the reason)
 *   and reloaded when it changes.
 * Either way a profile whose new version is invalid keeps its last good version (resolveProfiles).
 */
@Injectable()
export class ProfilesService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ProfilesService.name);
  private loaded: LoadedProfiles | undefined;
  private readonly source = new ProfileSource(this.logger);
  private lastText: string | undefined;
  private readonly listeners = new Set<(loaded: LoadedProfiles) => void>();
  private stopWatching: (() => void) | undefined;
  private controller: Controller | undefined;
  private reflector: Reflector<AgentProfileEntry> | undefined;

  constructor(
    @Inject(injectorConfig.KEY) private readonly config: InjectorConfig,
    private readonly metrics: InjectorMetrics,
    // Provided whenever PROFILES_FILE is unset (app.module.ts).
    @Inject(KUBE_CLIENT) private readonly kube: KubeClient,
  ) {}

  onModuleInit(): void {
    const file = this.config.profilesFile;
    if (file) {
      const error = this.reload();
      if (error) throw new Error(`PROFILES_FILE ${file}: ${error}`);
      this.stopWatching = watchFiles([file], this.config.filePollMs, () => this.reload());
      return;
    }
    // One key: a burst of AgentProfile events is resolved once. Not awaited: the webhook answers
    // (and stays unready) while the API cannot be reached; no Lease, every replica serves.
    this.controller = new Controller(this.kube, { keys: () => [PROFILES_KEY], log: this.logger });
    this.reflector = this.controller.watches<AgentProfileEntry>(AGENT_PROFILE_PLURAL, {
      path: resourcePath({ apiVersion: AGENT_PROFILE_API_VERSION, resource: AGENT_PROFILE_PLURAL }),
      project: agentProfileEntry,
    });
    this.metrics.watches.observe(() => this.controller?.status().watches ?? {});
    this.controller.run(() => this.resolve());
  }

  async onModuleDestroy(): Promise<void> {
    this.stopWatching?.();
    await this.controller?.shutdown();
  }

  /** The profiles in force, or undefined until the first load (see notLoadedReason). */
  current(): LoadedProfiles | undefined {
    return this.loaded;
  }

  /** Why no profiles are loaded yet. */
  notLoadedReason(): string {
    const error = this.reflector?.status().lastError;
    const why = error === undefined ? 'the AgentProfile list has not completed yet' : /\b404\b|not ?found/i.test(error) ? `${error} (is the CRD deploy/base/crd installed?)` : error;
    return `agent profiles are not loaded yet: ${why}`;
  }

  /** Generation in force per profile (API source only), for metrics and `outrigger check`. */
  generations(): ReadonlyMap<string, number> {
    return new Map(this.source.inForce().map((p) => [p.profile.name, p.generation]));
  }

  onChange(listener: (loaded: LoadedProfiles) => void): void {
    this.listeners.add(listener);
    if (this.loaded) listener(this.loaded);
  }

  /** Reads the file again; returns the error that kept the old profiles, if any. */
  reload(): string | undefined {
    const file = this.config.profilesFile;
    if (!file) return undefined;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      return this.fail(`cannot read ${file}: ${(error as Error).message}`);
    }
    // The same content is judged once: a bad file is reported once, not on every poll.
    if (text === this.lastText) return undefined;
    this.lastText = text;
    const change = this.source.fromFile(text);
    if (!change.ok) return this.fail(change.error);
    this.set({ profiles: change.value.inForce.map((p) => p.profile), source: file });
    this.metrics.profileReloads.inc({ result: 'success' });
    return undefined;
  }

  private resolve(): void {
    const reflector = this.reflector;
    if (!reflector?.status().hasSynced) return;
    const change = this.source.fromObjects(reflector.entries().map(([, entry]) => entry));
    change.newVerdicts.forEach((verdict) => this.metrics.profileReloads.inc({ result: verdict.accepted ? 'success' : 'failure' }));
    // Most events are the rbac-syncer's status writes: the extension is rebuilt only for a real change.
    if (change.changed) this.set({ profiles: change.inForce.map((p) => p.profile), source: 'AgentProfiles' });
  }

  private fail(reason: string): string {
    this.metrics.profileReloads.inc({ result: 'failure' });
    this.logger.error(`profiles not reloaded, keeping ${this.loaded?.source ?? 'none'}: ${reason}`);
    return reason;
  }

  private set(loaded: LoadedProfiles): void {
    const summary = (l: LoadedProfiles | undefined) => (l ? `${l.source}: ${l.profiles.map((p) => p.name).join(', ') || 'none'}` : '');
    if (summary(this.loaded) !== summary(loaded)) this.logger.log(`profiles in force from ${summary(loaded)}`);
    this.loaded = loaded;
    this.listeners.forEach((l) => l(loaded));
  }
}
