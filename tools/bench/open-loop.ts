import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import type { Socket } from 'node:net';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

export interface OpenLoopOptions {
  readonly url: string;
  readonly ca: string;
  readonly bodies: readonly string[];
  readonly rate: number;
  readonly durationMs: number;
  /** Sent first at the same rate on the same connections, and not measured. */
  readonly warmupMs: number;
}

export interface Percentiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export interface OpenLoopResult {
  /** Epoch ms of the first request due and of the last answer. */
  readonly startedAt: number;
  readonly endedAt: number;
  readonly sent: number;
  readonly ok: number;
  readonly failed: number;
  /**
   * ms from the moment each request was handed to the HTTP client to its full answer: what the API
   * server's own webhook latency metric measures. A request waiting for a free connection counts,
   * so a stalled server cannot hide behind the sender.
   */
  readonly latency: Percentiles;
  /** Every request's `latency` in µs, so runs can be pooled. */
  readonly latencySamplesUs: readonly number[];
  /** ms each request was handed to the HTTP client after it was due: the load generator's own timer and CPU stalls. */
  readonly senderLateness: Percentiles;
  /** ms from the moment each request was due to its full answer: `latency` plus the sender's lateness. */
  readonly latencyFromDue: Percentiles;
  /** TLS connections opened while measuring (after the warm-up). */
  readonly newConnections: number;
}

/**
 * Sends POSTs at a fixed rate, evenly spaced, whatever the answers do: an open loop, as the API
 * server calls a webhook. autocannon's rate limit is different: each connection sends its share of
 * a second's budget as fast as it can and then waits, so its "p99 at N req/s" is the p99 of
 * saturated bursts. Latencies are recorded in microseconds.
 *
 * Latency counts from the moment a request is handed to the HTTP client, as the API server's webhook
 * metric does. Node's timers fire on whole milliseconds and the sender shares the CPUs, so requests
 * leave somewhat after they were due; that lateness, and the latency counted from the due time, are
 * reported beside it rather than charged to the server.
 *
 * The warm-up matters: the API server keeps its connections to a webhook open, but a cold sender
 * opens one per request until answers come back, and that storm of TLS handshakes dominated p99.
 * Its figures are returned too (they include that setup).
 */
export async function openLoop(options: OpenLoopOptions): Promise<{ warmup: OpenLoopResult; measured: OpenLoopResult }> {
  const agent = new Agent({ ca: options.ca, keepAlive: true, maxSockets: 64 });
  try {
    const warmup = await schedule(agent, options, options.warmupMs);
    return { warmup, measured: await schedule(agent, options, options.durationMs) };
  } finally {
    agent.destroy();
  }
}

async function schedule(agent: Agent, options: OpenLoopOptions, durationMs: number): Promise<OpenLoopResult> {
  const latency = createHistogram();
  const latencySamplesUs: number[] = [];
  const lateness = createHistogram();
  const fromDue = createHistogram();
  const interval = 1000 / options.rate;
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  const knownSockets = new WeakSet<Socket>(Object.values(agent.freeSockets).flat() as Socket[]);
  let newConnections = 0;
  let due = started;
  let sent = 0;
  let ok = 0;
  let failed = 0;

  const send = (body: string, dueAt: number) => {
    const sentAt = performance.now();
    record(lateness, sentAt - dueAt);
    const answered = new Promise<void>((resolve) => {
      const req = request(options.url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => {
          const answeredAt = performance.now();
          latencySamplesUs.push(record(latency, answeredAt - sentAt));
          record(fromDue, answeredAt - dueAt);
          if (res.statusCode === 200) ok++;
          else failed++;
          resolve();
        });
      });
      req.on('socket', (socket) => {
        if (knownSockets.has(socket)) return;
        knownSockets.add(socket);
        newConnections++;
      });
      req.on('error', () => {
        failed++;
        resolve();
      });
      req.end(body);
    });
    inFlight.add(answered);
    void answered.then(() => inFlight.delete(answered));
  };

  await new Promise<void>((finished) => {
    const tick = () => {
      const now = performance.now();
      for (; due <= now && due - started < durationMs; due += interval, sent++) {
        send(options.bodies[sent % options.bodies.length] as string, due);
      }
      if (due - started >= durationMs) finished();
      else setTimeout(tick, Math.max(0, due - performance.now()));
    };
    tick();
  });
  await Promise.all(inFlight);
  const epoch = (t: number) => performance.timeOrigin + t;
  return { startedAt: epoch(started), endedAt: epoch(performance.now()), sent, ok, failed, latency: percentiles(latency), latencySamplesUs, senderLateness: percentiles(lateness), latencyFromDue: percentiles(fromDue), newConnections };
}

function record(histogram: RecordableHistogram, ms: number): number {
  const us = Math.max(1, Math.round(ms * 1000));
  histogram.record(us);
  return us;
}

/** Percentiles of several runs' requests taken together, computed as each run's own are. */
export function pooledLatency(results: readonly OpenLoopResult[]): Percentiles {
  const histogram = createHistogram();
  for (const r of results) for (const us of r.latencySamplesUs) histogram.record(us);
  return percentiles(histogram);
}

function percentiles(histogram: RecordableHistogram): Percentiles {
  const ms = (µs: number) => µs / 1000;
  return { p50: ms(histogram.percentile(50)), p90: ms(histogram.percentile(90)), p99: ms(histogram.percentile(99)), max: ms(histogram.max) };
}

/**
 * Runs `openLoop` in a child process with a fresh heap, so the sender's own garbage (the closed-loop
 * runs before it leave plenty) does not pause the reading of answers and count against the server.
 */
export function openLoopInChild(options: OpenLoopOptions): Promise<{ warmup: OpenLoopResult; measured: OpenLoopResult }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as { warmup: OpenLoopResult; measured: OpenLoopResult }) : reject(new Error(`open-loop child exited with ${code}`))));
    child.stdin.end(JSON.stringify(options));
  });
}

// Child mode: options as JSON on stdin, results as JSON on stdout.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const options = JSON.parse(readFileSync(0, 'utf8')) as OpenLoopOptions;
  process.stdout.write(JSON.stringify(await openLoop(options)));
}
