package main

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"
)

// metrics in the Prometheus text format, kept by hand: three families do not need a library.
type metrics struct {
	mu         sync.Mutex
	runs       map[string]int
	buckets    []float64
	counts     []int
	sum        float64
	count      int
	pending    int
	registered int
	refused    [2]int // by refusedCall
}

// refusedCall is why a call was refused: for its token, or for an address the agent did not register.
type refusedCall int

const (
	refusedToken refusedCall = iota
	refusedAddress
)

func newMetrics() *metrics {
	b := []float64{0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600}
	return &metrics{runs: map[string]int{}, buckets: b, counts: make([]int, len(b))}
}

// run counts a result; a run that never ran (discarded) has no duration.
func (m *metrics) run(result string, took time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs[result]++
	if result == "discarded" || took == 0 {
		return
	}
	s := took.Seconds()
	for i, b := range m.buckets {
		if s <= b {
			m.counts[i]++
		}
	}
	m.sum += s
	m.count++
}

func (m *metrics) refuse(why refusedCall) { m.mu.Lock(); m.refused[why]++; m.mu.Unlock() }

func (m *metrics) setPending(n int) { m.mu.Lock(); m.pending = n; m.mu.Unlock() }

func (m *metrics) setRegistered(n int) { m.mu.Lock(); m.registered = n; m.mu.Unlock() }

func (m *metrics) write(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintln(w, "# HELP xxl_agent_runs_total Job runs by result (success, failure, timeout, killed, discarded).")
	fmt.Fprintln(w, "# TYPE xxl_agent_runs_total counter")
	results := make([]string, 0, len(m.runs))
	for r := range m.runs {
		results = append(results, r)
	}
	sort.Strings(results)
	for _, r := range results {
		fmt.Fprintf(w, "xxl_agent_runs_total{result=%q} %d\n", r, m.runs[r])
	}
	fmt.Fprintln(w, "# HELP xxl_agent_run_duration_seconds Duration of job runs in the target container.")
	fmt.Fprintln(w, "# TYPE xxl_agent_run_duration_seconds histogram")
	for i, b := range m.buckets {
		fmt.Fprintf(w, "xxl_agent_run_duration_seconds_bucket{le=\"%g\"} %d\n", b, m.counts[i])
	}
	fmt.Fprintf(w, "xxl_agent_run_duration_seconds_bucket{le=\"+Inf\"} %d\n", m.count)
	fmt.Fprintf(w, "xxl_agent_run_duration_seconds_sum %g\nxxl_agent_run_duration_seconds_count %d\n", m.sum, m.count)
	fmt.Fprintln(w, "# HELP xxl_agent_callbacks_pending Results spooled and not yet accepted by an admin.")
	fmt.Fprintln(w, "# TYPE xxl_agent_callbacks_pending gauge")
	fmt.Fprintf(w, "xxl_agent_callbacks_pending %d\n", m.pending)
	fmt.Fprintln(w, "# HELP xxl_agent_admins_registered Admins that accepted the last registry beat.")
	fmt.Fprintln(w, "# TYPE xxl_agent_admins_registered gauge")
	fmt.Fprintf(w, "xxl_agent_admins_registered %d\n", m.registered)
	fmt.Fprintln(w, "# HELP xxl_agent_refused_calls_total Calls refused, by reason: a wrong or missing token, or an address the agent did not register (someone holding the token probing the pod network).")
	fmt.Fprintln(w, "# TYPE xxl_agent_refused_calls_total counter")
	fmt.Fprintf(w, "xxl_agent_refused_calls_total{reason=\"address\"} %d\nxxl_agent_refused_calls_total{reason=\"token\"} %d\n", m.refused[refusedAddress], m.refused[refusedToken])
	fmt.Fprintln(w, "# HELP xxl_agent_build_info Always 1; its version label is the build this agent runs.")
	fmt.Fprintln(w, "# TYPE xxl_agent_build_info gauge")
	fmt.Fprintf(w, "xxl_agent_build_info{version=%q} 1\n", version)
}
