package main

import (
	"crypto/subtle"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
)

// server answers the admin's calls (under the executor key, token required) and the probes and
// metrics (no token).
type server struct {
	token   string
	key     string
	ex      *executor
	logs    *runLogs
	metrics *metrics
	log     *slog.Logger
	ready   atomic.Bool
}

func (s *server) handler() http.Handler {
	calls := http.NewServeMux()
	calls.HandleFunc("/beat", s.admin(func([]byte) response { return ok(nil) }))
	calls.HandleFunc("/idleBeat", s.admin(func(b []byte) response {
		var r jobRequest
		if err := json.Unmarshal(b, &r); err != nil {
			return fail("invalid request body: " + err.Error())
		}
		return s.ex.idle(r.JobID)
	}))
	calls.HandleFunc("/run", s.admin(func(b []byte) response {
		var r triggerRequest
		if err := json.Unmarshal(b, &r); err != nil {
			return fail("invalid request body: " + err.Error())
		}
		res := s.ex.run(r)
		s.log.Info("trigger", "jobId", r.JobID, "logId", r.LogID, "glueType", r.GlueType, "handler", r.ExecutorHandler, "blockStrategy", r.ExecutorBlockStrategy, "code", res.Code, "msg", res.Msg)
		return res
	}))
	calls.HandleFunc("/kill", s.admin(func(b []byte) response {
		var r jobRequest
		if err := json.Unmarshal(b, &r); err != nil {
			return fail("invalid request body: " + err.Error())
		}
		s.log.Info("kill", "jobId", r.JobID)
		return s.ex.kill(r.JobID)
	}))
	calls.HandleFunc("/log", s.admin(func(b []byte) response {
		var r logRequest
		if err := json.Unmarshal(b, &r); err != nil {
			return fail("invalid request body: " + err.Error())
		}
		return ok(s.logs.read(r))
	}))
	mux := http.NewServeMux()
	mux.Handle("/", s.underKey(calls))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.ready.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		s.metrics.write(w)
	})
	return mux
}

// underKey passes on the calls made under the executor key, with the key taken off the path; any
// other call is answered as xxl-job-core answers a path it does not serve, and runs nothing.
func (s *server) underKey(calls http.Handler) http.Handler {
	strip := http.StripPrefix("/"+s.key, calls)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if subtle.ConstantTimeCompare([]byte(key), []byte(s.key)) == 1 {
			strip.ServeHTTP(w, r)
			return
		}
		s.log.Warn("refused a call outside the executor address registered with the admins", "remote", r.RemoteAddr)
		s.metrics.refuse(refusedAddress)
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		_ = json.NewEncoder(w).Encode(fail("invalid request, uri-mapping(" + r.URL.Path + ") not found."))
	})
}

// admin wraps one executor call: POST, the access token, a JSON body; the answer is always a
// protocol response with HTTP 200, as xxl-job-core's server gives it.
func (s *server) admin(call func([]byte) response) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var res response
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 5<<20))
		switch {
		case r.Method != http.MethodPost:
			res = fail("invalid request, HttpMethod not support.")
		case s.token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get(tokenHeader)), []byte(s.token)) != 1:
			s.log.Warn("refused a call with a wrong or missing access token", "path", r.URL.Path, "remote", r.RemoteAddr)
			s.metrics.refuse(refusedToken)
			res = fail("The access token is wrong.")
		case err != nil:
			res = fail("invalid request body: " + err.Error())
		default:
			res = call(body)
		}
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		_ = json.NewEncoder(w).Encode(res)
	}
}
