// Command xxl-agent is an XXL-JOB 3.x executor that runs in a pod beside the business container
// and runs each job inside that container through the Kubernetes exec API.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// version is the build's: a release sets it (-ldflags "-X main.version=1.2.0"), other builds say dev.
var version = "dev"

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := readConfig(os.Getenv)
	if err != nil {
		log.Error(err.Error())
		os.Exit(2)
	}
	switch args := os.Args[1:]; {
	case len(args) == 1 && args[0] == "address":
		os.Exit(printAddress(cfg))
	case len(args) > 0:
		log.Error(fmt.Sprintf("unknown arguments %q: the agent takes none; `xxl-agent address` prints the address it registered", args))
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, cfg, &kubeExec{api: cfg.kubeAPI, kubeDir: cfg.kubeDir}, log); err != nil {
		log.Error(err.Error())
		os.Exit(1)
	}
}

// registeredAddress is the address the admins call: the configured one with the executor key.
func registeredAddress(cfg config, key string) string { return cfg.address + key + "/" }

// printAddress is `xxl-agent address`, for whoever may exec into the agent's container (the pod's
// owners): the address the running agent registered.
func printAddress(cfg config) int {
	key, err := readExecutorKey(cfg.dataDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "no executor address yet (the agent makes it when it starts): "+err.Error())
		return 1
	}
	fmt.Println(registeredAddress(cfg, key))
	return 0
}

// run serves until ctx ends, then deregisters, stops the running jobs and delivers or keeps their results.
func run(ctx context.Context, cfg config, x execer, log *slog.Logger) error {
	if cfg.accessToken == "" {
		log.Warn("RUNNING WITHOUT AN ACCESS TOKEN (" + allowNoToken + "=true): anyone who reaches this port can run commands in " + cfg.target.String())
	}
	m := newMetrics()
	logs, err := newRunLogs(filepath.Join(cfg.dataDir, "logs"))
	if err != nil {
		return errors.New("XXL_AGENT_DATA_DIR: cannot write run logs: " + err.Error())
	}
	sp, err := newSpool(filepath.Join(cfg.dataDir, "callbacks"), m.setPending)
	if err != nil {
		return errors.New("XXL_AGENT_DATA_DIR: cannot write the callback spool: " + err.Error())
	}
	key, err := executorKey(cfg.dataDir)
	if err != nil {
		return errors.New("XXL_AGENT_DATA_DIR: cannot keep the executor key: " + err.Error())
	}
	ex := newExecutor(cfg, x, logs, sp, m, log)
	srv := &server{token: cfg.accessToken, key: key, ex: ex, logs: logs, metrics: m, log: log}
	listener, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return errors.New("PORT: cannot listen: " + err.Error())
	}
	httpServer := &http.Server{Handler: srv.handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = httpServer.Serve(listener) }()
	srv.ready.Store(true)
	// The key stays out of the log: whoever reads the logs of a namespace need not be able to run jobs there.
	log.Info("serving", "version", version, "address", cfg.address+"<executor key>/", "listen", cfg.listen, "app", cfg.appName, "admins", cfg.admins, "target", cfg.target.String())

	admin := &adminClient{admins: cfg.admins, token: cfg.accessToken, http: &http.Client{Timeout: 10 * time.Second}, log: log}
	registryDone := make(chan struct{})
	go func() {
		admin.registryLoop(ctx, registryRequest{RegistryGroup: "EXECUTOR", RegistryKey: cfg.appName, RegistryValue: registeredAddress(cfg, key)}, m.setRegistered)
		close(registryDone)
	}()
	callbacks, stopCallbacks := context.WithCancel(context.Background())
	callbacksDone := make(chan struct{})
	go func() { admin.callbackLoop(callbacks, sp); close(callbacksDone) }()
	go func() {
		for t := time.NewTicker(time.Hour); ; <-t.C {
			logs.prune(cfg.logRetention(), time.Now())
		}
	}()

	<-ctx.Done()
	log.Info("stopping: deregistering, stopping running jobs")
	srv.ready.Store(false)
	<-registryDone
	ex.shutdown()
	for deadline := time.Now().Add(15 * time.Second); !ex.idleAll() && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	stopCallbacks()
	<-callbacksDone
	// One last delivery; what is left stays spooled for the next start.
	if pending, files := sp.pending(); len(pending) > 0 && admin.sendCallbacks(context.Background(), pending) {
		sp.done(files)
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = httpServer.Shutdown(shutdown)
	return nil
}
