import { type PemPair, type ServingPair, samePair, validateServingPair } from './serving-pair.js';

/**
 * Asked by the HTTPS server, for every TLS handshake, which pair to present (as controller-runtime's
 * certwatcher is asked through `GetCertificate`). A source keeps its last good pair; it never
 * reaches into the server.
 */
export interface CertificateSource {
  /** The pair to serve now; undefined until the source has read a valid one. */
  current(): ServingPair | undefined;
}

/** What a source tells its owner: a new valid pair to consider, or a candidate it refused (the current one stays). */
export interface SourceEvents {
  readonly changed: () => void;
  readonly refused: (source: string, error: Error) => void;
}

/**
 * A source that keeps its last good pair. Each candidate it offers is read once
 * (validateServingPair): a new valid pair becomes current and is announced; one that does not
 * parse, does not match its key or has expired is refused, and the last good pair stays.
 */
export abstract class LastGoodPairSource implements CertificateSource {
  private pair: ServingPair | undefined;
  /** The last candidate looked at, good or bad: the same content is never judged (or logged) twice. */
  private lastSeen: string | undefined;
  private lastRefusal: string | undefined;

  constructor(private readonly events: SourceEvents) {}

  current(): ServingPair | undefined {
    return this.pair;
  }

  /** Why the source's latest content was refused; undefined once it holds a pair that was accepted. */
  refusal(): string | undefined {
    return this.lastRefusal;
  }

  protected offer(candidate: PemPair): void {
    const seen = `${candidate.cert}\n${candidate.key}`;
    if (seen === this.lastSeen) return;
    this.lastSeen = seen;
    let pair: ServingPair;
    try {
      pair = validateServingPair(candidate);
    } catch (error) {
      this.lastRefusal = (error as Error).message;
      this.events.refused(candidate.source, error as Error);
      return;
    }
    this.lastRefusal = undefined;
    if (samePair(pair, this.pair)) return;
    this.pair = pair;
    this.events.changed();
  }
}
