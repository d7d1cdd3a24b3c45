import { Logger } from '@nestjs/common';
import { LastGoodPairSource, type SourceEvents } from './certificate-source.js';
import { watchFiles } from './file-watch.js';
import { type PemPair, readPemFiles } from './serving-pair.js';

export interface FileSourceOptions {
  readonly certFile: string;
  readonly keyFile: string;
  readonly pollMs: number;
  /** While it answers true the files are not read (a watched Secret is the authority and the files lag it). */
  readonly paused?: () => boolean;
}

/**
 * The pair in TLS_CERT_FILE / TLS_KEY_FILE (a mounted Secret): read at start, then whenever the
 * files may have changed (inotify and a poll). A candidate that does not parse, does not match its
 * key or has expired is refused and the last good pair stays current.
 */
export class FileCertificateSource extends LastGoodPairSource {
  private readonly logger = new Logger(FileCertificateSource.name);
  private stopWatching: (() => void) | undefined;

  constructor(
    private readonly options: FileSourceOptions,
    events: SourceEvents,
  ) {
    super(events);
  }

  start(): this {
    this.read();
    this.stopWatching = watchFiles([this.options.certFile, this.options.keyFile], this.options.pollMs, () => this.read());
    return this;
  }

  stop(): void {
    this.stopWatching?.();
  }

  private read(): void {
    if (this.options.paused?.()) return;
    let candidate: PemPair;
    try {
      candidate = readPemFiles(this.options.certFile, this.options.keyFile);
    } catch (error) {
      // Mid-swap reads fail transiently; the next event or poll tries again.
      this.logger.debug?.(`could not read certificate files: ${(error as Error).message}`);
      return;
    }
    this.offer(candidate);
  }
}
