package main

import (
	"context"
	"io"
	"testing"
	"time"
)

// hangingKills starts the job (it reports its PID and runs until its stream is cancelled) and
// never answers a kill: an API server or kubelet that accepts the exec and then goes silent.
type hangingKills struct {
	kills    int
	reported chan struct{}
}

func (h *hangingKills) exec(ctx context.Context, _ target, command []string, _ io.Writer, stderr io.Writer) (int, error) {
	if kill := killCommand(42, "TERM"); len(command) == len(kill) && command[2] == kill[2] {
		h.kills++
	} else {
		_, _ = io.WriteString(stderr, pidMarker+"42\n")
		close(h.reported)
	}
	<-ctx.Done()
	return -1, ctx.Err()
}

func TestAStoppedJobEndsWhenItsKillsAreNeverAnswered(t *testing.T) {
	defer func(grace time.Duration) { killGrace = grace }(killGrace)
	killGrace = 20 * time.Millisecond
	x := &hangingKills{reported: make(chan struct{})}
	ctx, stop := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() {
		_, err := runInTarget(ctx, x, target{"ns", "pod", "app"}, command("GLUE_SHELL", "sleep 1000", triggerRequest{}), io.Discard)
		ended <- err
	}()
	<-x.reported
	stop()
	select {
	case err := <-ended:
		if err != context.Canceled {
			t.Fatalf("runInTarget returned %v, want the job's context error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("runInTarget still waits on a kill nobody answers: the job's slot is held for ever")
	}
	if x.kills != 2 {
		t.Fatalf("%d kills sent, want TERM then KILL", x.kills)
	}
}
