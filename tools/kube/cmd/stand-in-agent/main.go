// Command stand-in-agent is a test fixture, not a product: it stands in for the real xxl-job
// executor agent by doing what that agent does with the Kubernetes API. With the pod's
// ServiceAccount token it execs a command in its target container (CONTAINER_NAME of POD_NAME in
// NAMESPACE) and reports the result: one JSON line on stdout per exec, and over HTTP on PORT
// (GET /exec runs one now, GET /last returns the latest, GET /healthz).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

type result struct {
	OK        bool   `json:"ok"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Error     string `json:"error"`
	Pod       string `json:"pod"`
	Container string `json:"container"`
	At        string `json:"at"`
}

type target struct{ namespace, pod, container string }

type settings struct {
	target  target
	command []string
	port    string
}

// readSettings reads the environment the injector gives the agent; every error names the variable.
func readSettings(getenv func(string) string) (settings, error) {
	var missing []string
	need := func(name string) string {
		v := getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	}
	s := settings{target: target{namespace: need("NAMESPACE"), pod: need("POD_NAME"), container: need("CONTAINER_NAME")}}
	if len(missing) > 0 {
		return s, fmt.Errorf("missing environment variable(s): %s", strings.Join(missing, ", "))
	}
	s.command = []string{"sh", "-c", "echo outrigger-agent-exec-ok; hostname"}
	if c := getenv("EXEC_COMMAND"); c != "" {
		s.command = []string{"sh", "-c", c}
	}
	s.port = getenv("PORT")
	if s.port == "" {
		s.port = "9999"
	}
	return s, nil
}

type agent struct {
	config   *rest.Config
	client   kubernetes.Interface
	settings settings
	mu       sync.Mutex
	last     result
}

func (a *agent) exec(ctx context.Context) result {
	t := a.settings.target
	r := result{Pod: t.namespace + "/" + t.pod, Container: t.container, At: time.Now().UTC().Format(time.RFC3339Nano)}
	req := a.client.CoreV1().RESTClient().Post().Resource("pods").Namespace(t.namespace).Name(t.pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: t.container, Command: a.settings.command, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	var stdout, stderr bytes.Buffer
	err := func() error {
		ws, err := remotecommand.NewWebSocketExecutor(a.config, "GET", req.URL().String())
		if err != nil {
			return err
		}
		spdy, err := remotecommand.NewSPDYExecutor(a.config, "POST", req.URL())
		if err != nil {
			return err
		}
		// As kubectl does: SPDY only when the server refused the WebSocket upgrade.
		exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
			return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		})
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	}()
	r.Stdout, r.Stderr, r.OK = stdout.String(), stderr.String(), err == nil
	if err != nil {
		r.Error = err.Error()
	}
	line, _ := json.Marshal(r)
	fmt.Println(string(line))
	a.mu.Lock()
	a.last = r
	a.mu.Unlock()
	return r
}

func (a *agent) lastResult() result {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

func main() {
	s, err := readSettings(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stand-in-agent:", err)
		os.Exit(2)
	}
	config, err := rest.InClusterConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stand-in-agent: no in-cluster credentials:", err)
		os.Exit(2)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stand-in-agent:", err)
		os.Exit(2)
	}
	a := &agent{config: config, client: client, settings: s, last: result{Error: "no exec yet"}}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	// The syncer binds the ServiceAccount moments after the pod starts: retry the first exec.
	go func() {
		for delay := time.Second; ctx.Err() == nil; delay = min(2*delay, 8*time.Second) {
			if a.exec(ctx).OK {
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(delay):
			}
		}
	}()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	reply := func(w http.ResponseWriter, r result) {
		w.Header().Set("Content-Type", "application/json")
		if !r.OK {
			w.WriteHeader(http.StatusBadGateway)
		}
		_ = json.NewEncoder(w).Encode(r)
	}
	mux.HandleFunc("GET /exec", func(w http.ResponseWriter, r *http.Request) { reply(w, a.exec(r.Context())) })
	mux.HandleFunc("GET /last", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(a.lastResult())
	})
	server := &http.Server{Addr: ":" + s.port, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	if err := server.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "stand-in-agent:", err)
		os.Exit(1)
	}
}
