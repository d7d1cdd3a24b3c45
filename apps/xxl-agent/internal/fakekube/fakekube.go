// Package fakekube is a test fixture: an HTTPS server that answers the Kubernetes pods/exec
// WebSocket call (v5.channel.k8s.io) by running the command on this machine with sh, so the
// agent's exec client, launcher, PID capture and kill can be tested without a cluster. The
// real-cluster e2e runs the agent against a real API server and kubelet.
package fakekube

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Server is the fake API server. Token is the bearer token it accepts; Forbid makes it refuse
// every exec as RBAC would, Deny with this message as an admission policy would.
type Server struct {
	*httptest.Server
	Token  string
	Forbid bool
	Deny   string
	mu     sync.Mutex
	calls  []Call
}

// Call is one exec the server received.
type Call struct {
	Namespace, Pod, Container string
	Command                   []string
}

// Start starts a server and writes token and ca.crt into dir (the ServiceAccount directory layout).
func Start(dir, token string) (*Server, error) {
	s := &Server{Token: token}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(token), 0o600); err != nil {
		return nil, err
	}
	return s, nil
}

// Calls returns the execs received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 7 || parts[0] != "api" || parts[2] != "namespaces" || parts[4] != "pods" || parts[6] != "exec" {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		status(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if s.Forbid {
		status(w, http.StatusForbidden, `pods "`+parts[5]+`" is forbidden: User "system:serviceaccount:`+parts[3]+`:default" cannot create resource "pods/exec"`)
		return
	}
	if s.Deny != "" {
		status(w, http.StatusForbidden, s.Deny)
		return
	}
	if !strings.Contains(r.Header.Get("Sec-WebSocket-Protocol"), "v5.channel.k8s.io") {
		status(w, http.StatusBadRequest, "no supported protocol")
		return
	}
	q := r.URL.Query()
	call := Call{Namespace: parts[3], Pod: parts[5], Container: q.Get("container"), Command: q["command"]}
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
	conn, rw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	h := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(h[:]) + "\r\n\r\n")
	_ = rw.Flush()
	out := &frames{w: rw}
	cmd := exec.Command(call.Command[0], call.Command[1:]...)
	cmd.Stdout, cmd.Stderr = out.channel(1), out.channel(2)
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		out.send(3, []byte(`{"metadata":{},"status":"Success"}`))
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		b, _ := json.Marshal(map[string]any{"status": "Failure", "reason": "NonZeroExitCode", "message": "command terminated with non-zero exit code",
			"details": map[string]any{"causes": []map[string]string{{"reason": "ExitCode", "message": itoa(exit.ExitCode())}}}})
		out.send(3, b)
	case errors.As(err, &exit):
		// Killed by a signal: the kubelet reports 128+signal as the exit code.
		code := 137
		if ws, ok := exit.Sys().(interface{ Signal() os.Signal }); ok && ws.Signal().String() == "terminated" {
			code = 143
		}
		b, _ := json.Marshal(map[string]any{"status": "Failure", "reason": "NonZeroExitCode", "details": map[string]any{"causes": []map[string]string{{"reason": "ExitCode", "message": itoa(code)}}}})
		out.send(3, b)
	default:
		out.send(3, []byte(`{"status":"Failure","message":"`+err.Error()+`"}`))
	}
	_ = rw.Flush()
	// Wait for the client to close, so the status is read before the connection ends.
	_, _ = io.Copy(io.Discard, bufio.NewReader(conn))
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func status(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "status": "Failure", "message": msg, "code": code})
}

// frames writes server frames (unmasked binary messages, the channel number first).
type frames struct {
	mu sync.Mutex
	w  *bufio.ReadWriter
}

type channelWriter struct {
	f  *frames
	ch byte
}

func (f *frames) channel(ch byte) io.Writer { return channelWriter{f, ch} }

func (c channelWriter) Write(p []byte) (int, error) { return len(p), c.f.send(c.ch, p) }

func (f *frames) send(ch byte, p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	msg := append([]byte{ch}, p...)
	head := []byte{0x82}
	switch n := len(msg); {
	case n < 126:
		head = append(head, byte(n))
	case n <= 0xFFFF:
		head = append(head, 126, byte(n>>8), byte(n))
	default:
		head = append(head, 127)
		head = binary.BigEndian.AppendUint64(head, uint64(n))
	}
	if _, err := f.w.Write(append(head, msg...)); err != nil {
		return err
	}
	return f.w.Flush()
}
