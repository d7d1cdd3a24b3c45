/**
 * The calls xxl-job-admin makes to an executor (the agent), for the demo and the real-cluster
 * suite: a GLUE_SHELL run triggered with the access token, and its log read back. The protocol's
 * own client (xxl-job-core) drives the agent in apps/xxl-agent/compat; this is its smallest part.
 */

/** The XXL-JOB 3.x answer: code 200 is success; data holds the result of /log. */
export interface ExecutorAnswer {
  readonly code: number;
  readonly msg?: string | null;
  readonly data?: unknown;
}

/** One run as the admin identifies it: its log id and the trigger's time (the day its log is filed under). */
export interface ExecutorRun {
  readonly logId: number;
  readonly logDateTime: number;
}

/** POST `path` on the executor at `address` (the address it registered: http://<pod IP>:9999/<executor key>, no trailing slash), with the access token unless it is undefined. */
export async function callExecutor(address: string, path: '/run' | '/log' | '/beat' | '/idleBeat' | '/kill', body: object, token: string | undefined): Promise<ExecutorAnswer> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (token !== undefined) headers['XXL-JOB-ACCESS-TOKEN'] = token;
  const response = await fetch(`${address}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`${address}${path}: HTTP ${response.status}`);
  return (await response.json()) as ExecutorAnswer;
}

let lastLogId = Date.now();

/** How a trigger differs from the default one: a job of its own with one version of its code, its block strategy, timeout and parameter. */
export interface ShellJobOptions {
  /** The job's id; triggers of one job share its queue (default 1). */
  readonly jobId?: number;
  readonly blockStrategy?: 'SERIAL_EXECUTION' | 'DISCARD_LATER' | 'COVER_EARLY';
  /** executorTimeout in seconds; 0: none (default 60). */
  readonly timeoutSeconds?: number;
  /** executorParams, the script's $1. */
  readonly params?: string;
  /** glueUpdatetime, the version of the job's code: a trigger with another one replaces the job's queue (default: the trigger's time, a new version each time). */
  readonly codeVersion?: number;
}

/** Triggers `script` as a GLUE_SHELL job as xxl-job-admin does (POST /run); throws with the executor's message if it refuses. */
export async function triggerShellJob(address: string, token: string | undefined, script: string, options: ShellJobOptions = {}): Promise<ExecutorRun> {
  const run = { logId: ++lastLogId, logDateTime: Date.now() };
  const answer = await callExecutor(
    address,
    '/run',
    {
      jobId: options.jobId ?? 1,
      executorHandler: '',
      executorParams: options.params ?? '',
      executorBlockStrategy: options.blockStrategy ?? 'SERIAL_EXECUTION',
      executorTimeout: options.timeoutSeconds ?? 60,
      ...run,
      glueType: 'GLUE_SHELL',
      glueSource: script,
      glueUpdatetime: options.codeVersion ?? run.logDateTime,
      broadcastIndex: 0,
      broadcastTotal: 1,
    },
    token,
  );
  if (answer.code !== 200) throw new Error(`${address}/run refused: ${answer.msg ?? `code ${answer.code}`}`);
  return run;
}

/** What an executor's /log answers for a run whose log it has not created yet (xxl-job-core's words). */
export const LOG_NOT_YET = 'readLog fail, logFile not exists';

/**
 * The run's whole log once it has ended (/log says isEnd), polling until `timeoutMs`. A trigger is
 * accepted before its run starts; until then xxl-job-core's executors answer LOG_NOT_YET with isEnd
 * (ours answers isEnd false): for either, that is not the end of the run.
 */
export async function awaitRunLog(address: string, token: string | undefined, run: ExecutorRun, timeoutMs = 90_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await callExecutor(address, '/log', { logDateTim: run.logDateTime, logId: run.logId, fromLineNum: 1 }, token);
    const log = answer.data as { logContent?: string; isEnd?: boolean } | undefined;
    if (answer.code === 200 && log?.isEnd === true && log.logContent !== LOG_NOT_YET) return log.logContent ?? '';
    if (Date.now() > deadline) throw new Error(`run ${run.logId} on ${address} did not end within ${timeoutMs / 1000}s: ${JSON.stringify(answer)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
