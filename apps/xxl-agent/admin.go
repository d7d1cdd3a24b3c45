package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// adminClient calls the admins' /api endpoints with the access token.
type adminClient struct {
	admins []string
	token  string
	http   *http.Client
	log    *slog.Logger
}

// call posts body to one admin's /api/<method> and checks the protocol's answer.
func (a *adminClient) call(ctx context.Context, admin, method string, body any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, admin+"/api/"+method, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if a.token != "" {
		req.Header.Set(tokenHeader, a.token)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
	var r response
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &r) != nil {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	if r.Code != codeSuccess {
		return fmt.Errorf("code %d: %s", r.Code, r.Msg)
	}
	return nil
}

// register renews the registration with every admin; it reports how many accepted it.
func (a *adminClient) register(ctx context.Context, method string, r registryRequest) int {
	accepted := 0
	for _, admin := range a.admins {
		if err := a.call(ctx, admin, method, r); err != nil {
			a.log.Warn(method+" failed", "admin", admin, "error", err.Error())
			continue
		}
		accepted++
	}
	return accepted
}

// registryLoop registers at once and then every beat until ctx ends, then deregisters.
func (a *adminClient) registryLoop(ctx context.Context, r registryRequest, registered func(int)) {
	tick := time.NewTicker(beatPeriod * time.Second)
	defer tick.Stop()
	for {
		registered(a.register(ctx, "registry", r))
		select {
		case <-ctx.Done():
			bye, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			n := a.register(bye, "registryRemove", r)
			a.log.Info("deregistered", "admins", n, "of", len(a.admins))
			return
		case <-tick.C:
		}
	}
}

// callbackLoop sends spooled results until ctx ends: all pending in one call, to the first
// admin that accepts them (admins share one database), retrying with backoff while none does.
func (a *adminClient) callbackLoop(ctx context.Context, s *spool) {
	delay := time.Second
	for {
		pending, files := s.pending()
		if len(pending) > 0 {
			if a.sendCallbacks(ctx, pending) {
				s.done(files)
				delay = time.Second
				continue
			}
			delay = min(2*delay, 30*time.Second)
		}
		wait := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-s.wake:
		case <-wait.C:
		}
		wait.Stop()
	}
}

func (a *adminClient) sendCallbacks(ctx context.Context, pending []callbackRequest) bool {
	for _, admin := range a.admins {
		call, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := a.call(call, admin, "callback", pending)
		cancel()
		if err == nil {
			a.log.Info("callbacks delivered", "admin", admin, "count", len(pending))
			return true
		}
		a.log.Warn("callback failed; kept in the spool", "admin", admin, "count", len(pending), "error", err.Error())
	}
	return false
}
