package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// kubeExec runs commands in a container through the API server's pods/exec (WebSocket,
// v5.channel.k8s.io, else v4), with the pod's ServiceAccount token, re-read for every call
// because the projected token rotates.
type kubeExec struct {
	api     string
	kubeDir string
}

// execError is a failure to run the command at all (not a non-zero exit): refused, unreachable.
type execError struct{ msg string }

func (e *execError) Error() string { return e.msg }

// exec runs command in t, streaming its stdout and stderr to out, and returns its exit code.
func (k *kubeExec) exec(ctx context.Context, t target, command []string, stdout, stderr io.Writer) (int, error) {
	token, err := os.ReadFile(filepath.Join(k.kubeDir, "token"))
	if err != nil {
		return -1, &execError{"no ServiceAccount token to exec with: " + err.Error()}
	}
	client, err := k.client()
	if err != nil {
		return -1, &execError{err.Error()}
	}
	q := url.Values{"container": {t.container}, "stdout": {"true"}, "stderr": {"true"}}
	for _, c := range command {
		q.Add("command", c)
	}
	u := fmt.Sprintf("%s/api/v1/namespaces/%s/pods/%s/exec?%s", k.api, url.PathEscape(t.namespace), url.PathEscape(t.pod), q.Encode())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return -1, &execError{err.Error()}
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	wsKey := base64.StdEncoding.EncodeToString(key)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", wsKey)
	req.Header.Set("Sec-WebSocket-Protocol", "v5.channel.k8s.io, v4.channel.k8s.io")
	resp, err := client.Do(req)
	if err != nil {
		return -1, &execError{"cannot reach the API server at " + k.api + ": " + err.Error()}
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		return -1, &execError{refusal(resp, t)}
	}
	if resp.Header.Get("Sec-WebSocket-Accept") != acceptKey(wsKey) {
		resp.Body.Close()
		return -1, &execError{"the API server answered the exec with a bad WebSocket handshake"}
	}
	conn := resp.Body.(io.ReadWriteCloser)
	defer conn.Close()
	// Cancelling the context ends the stream (the remote process is stopped separately: see runner).
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	return readChannels(bufio.NewReader(conn), conn, stdout, stderr)
}

func (k *kubeExec) client() (*http.Client, error) {
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(filepath.Join(k.kubeDir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("no cluster CA to verify the API server: %v", err)
	}
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no PEM certificate", filepath.Join(k.kubeDir, "ca.crt"))
	}
	// HTTP/1.1 only: the WebSocket upgrade does not exist in HTTP/2.
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}},
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		DisableKeepAlives:   true,
	}}, nil
}

// refusal says why the API server did not open the exec stream, with the remedy for the usual causes.
func refusal(resp *http.Response, t target) string {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var status struct{ Message string }
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &status) == nil && status.Message != "" {
		msg = status.Message
	}
	switch resp.StatusCode {
	case http.StatusForbidden:
		// RBAC says "cannot get|create resource "pods/exec"" (a WebSocket exec is authorized as
		// get, and as create too); an admission policy (the exec guard) says why it denied.
		if strings.Contains(msg, ` resource "pods/exec"`) && strings.Contains(msg, " cannot ") {
			return fmt.Sprintf("exec into %s forbidden (%s): the pod's ServiceAccount is not bound to the agent's role; the rbac-syncer binds it for opted-in pods (is it running, and is this pod opted in?)", t, msg)
		}
		return fmt.Sprintf("exec into %s refused by admission: %s", t, msg)
	case http.StatusUnauthorized:
		return fmt.Sprintf("exec into %s: the API server refused the ServiceAccount token (%s)", t, msg)
	case http.StatusNotFound:
		return fmt.Sprintf("exec into %s: not found (%s)", t, msg)
	}
	return fmt.Sprintf("exec into %s refused: HTTP %d: %s", t, resp.StatusCode, msg)
}

func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// readChannels reads the stream's messages until the error channel's status, which carries the exit code.
func readChannels(r *bufio.Reader, w io.Writer, stdout, stderr io.Writer) (int, error) {
	var message []byte
	for {
		fin, opcode, payload, err := readFrame(r)
		if err != nil {
			return -1, &execError{"the exec stream broke: " + err.Error()}
		}
		switch opcode {
		case 0x8: // close
			return -1, &execError{"the exec stream closed before the command's exit status"}
		case 0x9: // ping
			_ = writeFrame(w, 0xA, payload)
			continue
		case 0xA:
			continue
		}
		message = append(message, payload...)
		if !fin {
			continue
		}
		if len(message) > 0 {
			data := message[1:]
			switch message[0] {
			case 1:
				_, _ = stdout.Write(data)
			case 2:
				_, _ = stderr.Write(data)
			case 3:
				return exitCode(data)
			}
		}
		message = message[:0]
	}
}

// exitCode reads the error channel's metav1.Status.
func exitCode(data []byte) (int, error) {
	var s struct {
		Status  string
		Reason  string
		Message string
		Details struct {
			Causes []struct{ Reason, Message string }
		}
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return -1, &execError{"unreadable exec status: " + string(data)}
	}
	if s.Status == "Success" {
		return 0, nil
	}
	if s.Reason == "NonZeroExitCode" {
		for _, c := range s.Details.Causes {
			if c.Reason == "ExitCode" {
				if n, err := strconv.Atoi(c.Message); err == nil {
					return n, nil
				}
			}
		}
	}
	return -1, &execError{"exec failed: " + s.Message}
}

func readFrame(r *bufio.Reader) (fin bool, opcode byte, payload []byte, err error) {
	var h [2]byte
	if _, err = io.ReadFull(r, h[:]); err != nil {
		return
	}
	fin, opcode = h[0]&0x80 != 0, h[0]&0x0F
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		var b [2]byte
		if _, err = io.ReadFull(r, b[:]); err != nil {
			return
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err = io.ReadFull(r, b[:]); err != nil {
			return
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > 16<<20 {
		return false, 0, nil, errors.New("frame larger than 16 MiB")
	}
	var mask [4]byte
	masked := h[1]&0x80 != 0
	if masked {
		if _, err = io.ReadFull(r, mask[:]); err != nil {
			return
		}
	}
	payload = make([]byte, n)
	if _, err = io.ReadFull(r, payload); err != nil {
		return
	}
	if masked {
		for i := range payload {
			payload[i] ^= mask[i%4]
		}
	}
	return
}

// writeFrame writes one final frame; a client masks every frame it sends.
func writeFrame(w io.Writer, opcode byte, payload []byte) error {
	frame := []byte{0x80 | opcode}
	switch n := len(payload); {
	case n < 126:
		frame = append(frame, 0x80|byte(n))
	case n <= 0xFFFF:
		frame = append(frame, 0x80|126, byte(n>>8), byte(n))
	default:
		frame = append(frame, 0x80|127)
		frame = binary.BigEndian.AppendUint64(frame, uint64(n))
	}
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	frame = append(frame, mask[:]...)
	for i, b := range payload {
		frame = append(frame, b^mask[i%4])
	}
	_, err := w.Write(frame)
	return err
}
