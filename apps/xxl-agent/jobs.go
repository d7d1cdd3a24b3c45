package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// executor keeps one queue per job, run one trigger at a time, as xxl-job-core's job threads do.
type executor struct {
	cfg      config
	x        execer
	logs     *runLogs
	spool    *spool
	metrics  *metrics
	log      *slog.Logger
	mu       sync.Mutex
	jobs     map[int]*job
	running  int // triggers running, also of removed jobs
	stopping bool
}

// job is one job's queue. identity changes when the job's code does (glue type, handler, glue
// update time): a trigger with another identity replaces the queue, as xxl-job-core does.
type job struct {
	id       int
	identity string
	queue    []triggerRequest
	running  *triggerRequest
	stop     context.CancelCauseFunc // stops the running trigger
	removed  bool
}

func (j *job) busy() bool { return j.running != nil || len(j.queue) > 0 }

// errKilled and friends are the causes a run is stopped with; their text goes to the callback.
var (
	errKilled   = errors.New("job killed by the scheduling center")
	errCovered  = errors.New("block strategy effect: Cover Early, the running trigger stopped for a new one")
	errReplaced = errors.New("job code changed (glue type, handler or source): the old trigger stopped")
	errShutdown = errors.New("the agent is shutting down")
)

func newExecutor(cfg config, x execer, logs *runLogs, sp *spool, m *metrics, log *slog.Logger) *executor {
	return &executor{cfg: cfg, x: x, logs: logs, spool: sp, metrics: m, log: log, jobs: map[int]*job{}}
}

// identity of a trigger's code; an error when this agent cannot run it.
func (e *executor) identity(t triggerRequest) (string, error) {
	switch {
	case t.GlueType == "BEAN":
		if _, ok := e.cfg.handlers[t.ExecutorHandler]; !ok {
			return "", fmt.Errorf("job handler [%s] not found (this agent's handlers come from XXL_AGENT_HANDLERS)", t.ExecutorHandler)
		}
		return "BEAN/" + t.ExecutorHandler, nil
	case interpreters[t.GlueType] != "":
		return fmt.Sprintf("%s/%d", t.GlueType, t.GlueUpdatetime), nil
	}
	return "", fmt.Errorf("glueType[%s] is not valid for this agent (it runs BEAN handlers and GLUE_SHELL, GLUE_PYTHON, GLUE_PYTHON2, GLUE_NODEJS scripts in the target container)", t.GlueType)
}

// run accepts or refuses a trigger (the /run call).
func (e *executor) run(t triggerRequest) response {
	id, err := e.identity(t)
	if err != nil {
		return fail(err.Error())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping {
		return fail(errShutdown.Error())
	}
	j := e.jobs[t.JobID]
	if j != nil && j.identity != id {
		e.removeLocked(j, errReplaced)
		j = nil
	}
	if j != nil && j.busy() {
		switch t.ExecutorBlockStrategy {
		case discardLater:
			e.metrics.run("discarded", 0)
			return fail("block strategy effect: Discard Later")
		case coverEarly:
			e.removeLocked(j, errCovered)
			j = nil
		}
	}
	if j != nil {
		for _, q := range j.queue {
			if q.LogID == t.LogID {
				return fail(fmt.Sprintf("repeat trigger job, logId:%d", t.LogID))
			}
		}
	}
	if j == nil {
		j = &job{id: t.JobID, identity: id}
		e.jobs[t.JobID] = j
	}
	j.queue = append(j.queue, t)
	e.logs.expect(t.LogID)
	if j.running == nil {
		go e.work(j)
	}
	return ok(nil)
}

// removeLocked stops a job's running trigger and reports its queued ones as not run.
func (e *executor) removeLocked(j *job, cause error) {
	j.removed = true
	if e.jobs[j.id] == j {
		delete(e.jobs, j.id)
	}
	if j.stop != nil {
		j.stop(cause)
	}
	for _, t := range j.queue {
		e.logs.forget(t.LogID)
		e.finish(t, codeFail, "job not executed, in the job queue, killed: "+cause.Error(), "killed", 0)
	}
	j.queue = nil
}

func (e *executor) kill(jobID int) response {
	e.mu.Lock()
	defer e.mu.Unlock()
	j := e.jobs[jobID]
	if j == nil {
		return ok("job thread already killed.")
	}
	e.removeLocked(j, errKilled)
	return ok(nil)
}

func (e *executor) idle(jobID int) response {
	e.mu.Lock()
	defer e.mu.Unlock()
	if j := e.jobs[jobID]; j != nil && j.busy() {
		return fail("job thread is running or has trigger queue.")
	}
	return ok(nil)
}

// work runs a job's queue until it is empty or the job is removed.
func (e *executor) work(j *job) {
	for {
		e.mu.Lock()
		if j.removed || len(j.queue) == 0 {
			j.running, j.stop = nil, nil
			if !j.removed && e.jobs[j.id] == j {
				delete(e.jobs, j.id)
			}
			e.mu.Unlock()
			return
		}
		t := j.queue[0]
		j.queue = j.queue[1:]
		ctx, stop := context.WithCancelCause(context.Background())
		j.running, j.stop = &t, stop
		e.running++
		e.mu.Unlock()
		e.execute(ctx, t)
		stop(nil)
		e.mu.Lock()
		j.running, j.stop = nil, nil
		e.running--
		e.mu.Unlock()
	}
}

// execute runs one trigger in the target container, keeps its log and spools its result.
func (e *executor) execute(ctx context.Context, t triggerRequest) {
	start := time.Now()
	w, err := e.logs.create(t.LogDateTime, t.LogID)
	if err != nil {
		e.finish(t, codeFail, "cannot write the run's log: "+err.Error(), "failure", 0)
		return
	}
	fmt.Fprintf(w, "----------- xxl-agent: job %d, log %d, %s in %s\n", t.JobID, t.LogID, t.GlueType, e.cfg.target)
	script := t.GlueSource
	if t.GlueType == "BEAN" {
		script = e.cfg.handlers[t.ExecutorHandler]
	}
	runCtx := ctx
	if t.ExecutorTimeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, time.Duration(t.ExecutorTimeout)*time.Second, context.DeadlineExceeded)
		defer cancel()
	}
	code, runErr := runInTarget(runCtx, e.x, e.cfg.target, command(t.GlueType, script, t), w)
	handleCode, msg, result := codeSuccess, "", "success"
	switch cause := context.Cause(runCtx); {
	case runErr != nil && errors.Is(cause, context.DeadlineExceeded):
		handleCode, msg, result = codeTimeout, "job execute timeout", "timeout"
	case runErr != nil && cause != nil:
		handleCode, msg, result = codeFail, cause.Error(), "killed"
	default:
		handleCode, msg = describeExit(code, runErr)
		if handleCode != codeSuccess {
			result = "failure"
		}
	}
	fmt.Fprintf(w, "----------- xxl-agent: finished, handleCode=%d, handleMsg=%s\n", handleCode, msg)
	e.logs.close(t.LogID, w)
	e.finish(t, handleCode, msg, result, time.Since(start))
}

// finish records a result and spools its callback.
func (e *executor) finish(t triggerRequest, code int, msg, result string, took time.Duration) {
	e.metrics.run(result, took)
	e.log.Info("run finished", "jobId", t.JobID, "logId", t.LogID, "result", result, "handleCode", code, "handleMsg", msg, "seconds", took.Seconds())
	if err := e.spool.add(callbackRequest{LogID: t.LogID, LogDateTim: t.LogDateTime, HandleCode: code, HandleMsg: msg}); err != nil {
		e.log.Error("cannot spool a callback: the result is lost", "logId", t.LogID, "error", err)
	}
}

// shutdown stops every job (their results are spooled) and refuses new triggers.
func (e *executor) shutdown() {
	e.mu.Lock()
	e.stopping = true
	jobs := make([]*job, 0, len(e.jobs))
	for _, j := range e.jobs {
		jobs = append(jobs, j)
	}
	for _, j := range jobs {
		e.removeLocked(j, errShutdown)
	}
	e.mu.Unlock()
}

// idleAll reports whether no job runs (shutdown waits for it).
func (e *executor) idleAll() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.jobs) == 0 && e.running == 0
}
