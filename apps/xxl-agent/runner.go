package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// execer runs a command in the target container (kubeExec; tests give another).
type execer interface {
	exec(ctx context.Context, t target, command []string, stdout, stderr io.Writer) (int, error)
}

// interpreters: how each script glue type runs in the target container. The script is an
// argument ($1 of the launcher), followed by the run's parameters, as xxl-job-core passes them:
// executorParams, broadcastIndex, broadcastTotal.
var interpreters = map[string]string{
	"GLUE_SHELL":   `exec sh -c "$s" xxl-job "$@"`,
	"GLUE_PYTHON":  `exec python3 -c "$s" "$@"`,
	"GLUE_PYTHON2": `exec python -c "$s" "$@"`,
	"GLUE_NODEJS":  `exec node -e "$s" xxl-job "$@"`,
}

// pidMarker starts the launcher's first stderr line, which carries the job's PID for kill; the
// runner takes it out of the log.
const pidMarker = "\x1exxl-agent-pid "

// command is what runs in the target container for a trigger: the launcher prints its PID, then
// becomes the job (exec), so that PID is the job's. script is the glue source or the bean handler's command.
func command(glueType, script string, p triggerRequest) []string {
	run := interpreters[glueType]
	if glueType == "BEAN" {
		run = interpreters["GLUE_SHELL"]
	}
	launcher := `printf '` + pidMarker[1:] + `%s\n' "$$" >&2; s=$1; shift; ` + run
	return []string{"sh", "-c", "printf '\\036'>&2; " + launcher, "xxl-agent", script,
		p.ExecutorParams, strconv.Itoa(p.BroadcastIndex), strconv.Itoa(p.BroadcastTotal)}
}

// killCommand signals a job's process and all its descendants in the target container.
func killCommand(pid int, signal string) []string {
	return []string{"sh", "-c", `k() { for c in $(cat /proc/$1/task/*/children 2>/dev/null); do k "$c" "$2"; done; kill -"$2" "$1" 2>/dev/null; }; k "$0" "$1"`,
		strconv.Itoa(pid), signal}
}

// killGrace is how long a stopped job has between SIGTERM and SIGKILL.
var killGrace = 5 * time.Second

// runInTarget runs one job in the target container, writing its output to log. When ctx ends
// first (timeout, kill, cover), the job's processes are signalled in the container and the
// stream's end awaited, so nothing of the job keeps running. It returns the exit code.
func runInTarget(ctx context.Context, x execer, t target, cmd []string, log io.Writer) (int, error) {
	var mu sync.Mutex
	out := &lockedWriter{w: log, mu: &mu}
	pids := &pidCatcher{w: out, found: make(chan int, 1)}
	stream, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := x.exec(stream, t, cmd, out, pids)
		done <- result{code, err}
	}()
	select {
	case r := <-done:
		return r.code, r.err
	case <-ctx.Done():
	}
	// Stopped before the launcher reported its PID: wait for it (or the end) a moment.
	var pid int
	select {
	case pid = <-pids.found:
	case r := <-done:
		return r.code, ctx.Err()
	case <-time.After(killGrace):
	}
	if pid > 0 {
		for _, signal := range []string{"TERM", "KILL"} {
			// A kill the API server or the kubelet never answers must not hold the job's slot for ever.
			kill, stop := context.WithTimeout(context.Background(), killGrace)
			_, _ = x.exec(kill, t, killCommand(pid, signal), io.Discard, io.Discard)
			stop()
			select {
			case r := <-done:
				return r.code, ctx.Err()
			case <-time.After(killGrace):
			}
		}
	}
	cancel()
	r := <-done
	return r.code, ctx.Err()
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// pidCatcher passes stderr through, except the launcher's PID line, which it reports once.
type pidCatcher struct {
	w     io.Writer
	found chan int
	head  []byte
	done  bool
}

func (p *pidCatcher) Write(b []byte) (int, error) {
	if p.done {
		return p.w.Write(b)
	}
	p.head = append(p.head, b...)
	if len(p.head) > 0 && p.head[0] != pidMarker[0] {
		return p.flush(len(b))
	}
	i := bytes.IndexByte(p.head, '\n')
	if i < 0 {
		if len(p.head) > 64 {
			return p.flush(len(b))
		}
		return len(b), nil
	}
	line := p.head[:i]
	if bytes.HasPrefix(line, []byte(pidMarker)) {
		if pid, err := strconv.Atoi(string(line[len(pidMarker):])); err == nil {
			p.found <- pid
			p.head = p.head[i+1:]
		}
	}
	return p.flush(len(b))
}

func (p *pidCatcher) flush(n int) (int, error) {
	p.done = true
	if len(p.head) > 0 {
		if _, err := p.w.Write(p.head); err != nil {
			return 0, err
		}
	}
	p.head = nil
	return n, nil
}

// describeExit is a run's result message, as xxl-job-core words a script's.
func describeExit(code int, err error) (int, string) {
	var ee *execError
	switch {
	case errors.As(err, &ee):
		return codeFail, ee.msg
	case err != nil:
		return codeFail, err.Error()
	case code != 0:
		return codeFail, fmt.Sprintf("script exit value(%d) is failed", code)
	}
	return codeSuccess, ""
}
