import { readFileSync } from 'node:fs';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { parseProfiles, profileWarnings, XXL_JOB_PROFILE, type AgentProfile } from '@outrigger/admission';
import { injectorConfig, type InjectorConfig } from '../config/injector.config.js';
import { InjectorMetrics } from '../metrics/injector.metrics.js';
import { watchFiles } from '../tls/file-watch.js';

export interface LoadedProfiles {
  readonly profiles: readonly AgentProfile[];
  readonly source: string;
}

/**
 * The agent profiles in force. Loaded from PROFILES_FILE at startup (a bad file stops startup with
 * the reason) and reloaded when it changes; a bad new file is logged and counted, and the last
 * good profiles stay in force. Without PROFILES_FILE the built-in reference profile is used.
 */
@Injectable()
export class ProfilesService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ProfilesService.name);
  private loaded: LoadedProfiles = { profiles: [], source: 'none' };
  private lastText: string | undefined;
  private readonly listeners = new Set<(loaded: LoadedProfiles) => void>();
  private stopWatching: (() => void) | undefined;

  constructor(
    @Inject(injectorConfig.KEY) private readonly config: InjectorConfig,
    private readonly metrics: InjectorMetrics,
  ) {}

  onModuleInit(): void {
    const file = this.config.profilesFile;
    if (!file) {
      this.set({ profiles: [XXL_JOB_PROFILE], source: 'built-in reference profile' });
      this.logger.log(`PROFILES_FILE is not set: using the built-in reference profile (${XXL_JOB_PROFILE.name})`);
      return;
    }
    const error = this.reload();
    if (error) throw new Error(`PROFILES_FILE ${file}: ${error}`);
    this.stopWatching = watchFiles([file], this.config.filePollMs, () => this.reload());
  }

  onModuleDestroy(): void {
    this.stopWatching?.();
  }

  current(): LoadedProfiles {
    return this.loaded;
  }

  onChange(listener: (loaded: LoadedProfiles) => void): void {
    this.listeners.add(listener);
    listener(this.loaded);
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
    const parsed = parseProfiles(text);
    if (!parsed.ok) return this.fail(parsed.error);
    this.set({ profiles: parsed.value, source: file });
    this.metrics.profileReloads.inc({ result: 'success' });
    this.logger.log(`loaded ${parsed.value.length} profile(s) from ${file}: ${parsed.value.map((p) => p.name).join(', ')}`);
    parsed.value.flatMap(profileWarnings).forEach((line) => this.logger.warn(line));
    return undefined;
  }

  private fail(reason: string): string {
    this.metrics.profileReloads.inc({ result: 'failure' });
    this.logger.error(`profiles not reloaded, keeping ${this.loaded.source}: ${reason}`);
    return reason;
  }

  private set(loaded: LoadedProfiles): void {
    this.loaded = loaded;
    this.listeners.forEach((l) => l(loaded));
  }
}
