// autocannon 9 ships no types; only what tools/bench uses.
declare module 'autocannon' {
  export interface Histogram {
    readonly average: number;
    readonly mean: number;
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
  }
  export interface Request {
    readonly method?: string;
    readonly path?: string;
    readonly headers?: Record<string, string>;
    readonly body?: string | Buffer;
  }
  export interface Options {
    readonly url: string;
    readonly connections?: number;
    readonly duration?: number;
    readonly overallRate?: number;
    readonly pipelining?: number;
    readonly timeout?: number;
    readonly method?: string;
    readonly headers?: Record<string, string>;
    readonly requests?: readonly Request[];
    readonly tlsOptions?: Record<string, unknown>;
  }
  export interface Result {
    readonly requests: Histogram & { readonly total: number };
    readonly latency: Histogram;
    readonly throughput: Histogram;
    readonly errors: number;
    readonly timeouts: number;
    readonly non2xx: number;
    readonly '2xx': number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
