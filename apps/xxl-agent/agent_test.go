package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"outrigger.dev/xxl-agent/internal/fakekube"
)

const testToken = "test-access-token"

// testAdmin records what an admin receives; down makes it unreachable-like (HTTP 503).
type testAdmin struct {
	*httptest.Server
	mu        sync.Mutex
	registry  []registryRequest
	removed   []registryRequest
	callbacks []callbackRequest
	badToken  int
	down      bool
}

func startAdmin(t *testing.T) *testAdmin {
	a := &testAdmin{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get(tokenHeader) != testToken {
			a.badToken++
			_ = json.NewEncoder(w).Encode(fail("The access token is wrong."))
			return
		}
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/xxl-job-admin/api/registry", "/xxl-job-admin/api/registryRemove":
			var req registryRequest
			_ = json.Unmarshal(body, &req)
			if strings.HasSuffix(r.URL.Path, "Remove") {
				a.removed = append(a.removed, req)
			} else {
				a.registry = append(a.registry, req)
			}
		case "/xxl-job-admin/api/callback":
			var reqs []callbackRequest
			_ = json.Unmarshal(body, &reqs)
			a.callbacks = append(a.callbacks, reqs...)
		default:
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(ok(nil))
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *testAdmin) setDown(down bool) { a.mu.Lock(); a.down = down; a.mu.Unlock() }

func (a *testAdmin) callback(logID int64) (callbackRequest, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.callbacks {
		if c.LogID == logID {
			return c, true
		}
	}
	return callbackRequest{}, false
}

type testAgent struct {
	base    string // http://127.0.0.1:<port>, where the probes are
	url     string // the address it registered, without the trailing slash: where the admin calls
	kube    *fakekube.Server
	dataDir string
	stop    func()
}

// startAgent runs the agent in this process against the fake exec target and the test admin.
func startAgent(t *testing.T, admin *testAdmin, dataDir string, handlers map[string]string) *testAgent {
	t.Helper()
	saDir := t.TempDir()
	kube, err := fakekube.Start(saDir, "sa-token")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kube.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	h, _ := json.Marshal(handlers)
	e := map[string]string{
		"XXL_JOB_ADDR": admin.URL + "/xxl-job-admin/", "XXL_JOB_NAME": "billing", "XXL_JOB_ACCESS_TOKEN": testToken,
		"NAMESPACE": "shop", "POD_NAME": "billing-0", "CONTAINER_NAME": "app", "POD_IP": "127.0.0.1", "PORT": itoa(port),
		"XXL_AGENT_KUBE_API": kube.URL, "XXL_AGENT_SERVICE_ACCOUNT_DIR": saDir, "XXL_AGENT_DATA_DIR": dataDir, "XXL_AGENT_HANDLERS": string(h),
	}
	cfg, err := readConfig(env(e))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, cfg, &kubeExec{api: cfg.kubeAPI, kubeDir: cfg.kubeDir}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	a := &testAgent{base: "http://127.0.0.1:" + itoa(port), kube: kube, dataDir: dataDir}
	stopped := false
	a.stop = func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(a.stop)
	eventually(t, "the agent serves", func() bool {
		resp, err := http.Get(a.base + "/readyz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	key, err := readExecutorKey(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	a.url = a.base + "/" + key
	return a
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// call posts body to the agent as the admin would, with token.
func (a *testAgent) call(t *testing.T, path, token string, body any) response {
	t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, a.url+path, bytes.NewReader(data))
	if token != "" {
		req.Header.Set(tokenHeader, token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting until %s", what)
}

func waitCallback(t *testing.T, admin *testAdmin, logID int64) callbackRequest {
	t.Helper()
	var c callbackRequest
	eventually(t, "the admin has the callback of log "+itoa(int(logID)), func() bool {
		var found bool
		c, found = admin.callback(logID)
		return found
	})
	return c
}

func shell(jobID int, logID int64, script string) triggerRequest {
	return triggerRequest{JobID: jobID, LogID: logID, LogDateTime: time.Now().UnixMilli(), GlueType: "GLUE_SHELL", GlueSource: script,
		GlueUpdatetime: 1, ExecutorParams: "p1", BroadcastIndex: 0, BroadcastTotal: 1, ExecutorBlockStrategy: serialExecution}
}

func TestRegistersRunsAndReportsThroughTheExecAPI(t *testing.T) {
	admin := startAdmin(t)
	agent := startAgent(t, admin, t.TempDir(), nil)
	eventually(t, "registered", func() bool { admin.mu.Lock(); defer admin.mu.Unlock(); return len(admin.registry) > 0 })
	if r := admin.registry[0]; r != (registryRequest{"EXECUTOR", "billing", agent.url + "/"}) || !keyPattern.MatchString(strings.TrimPrefix(agent.url, agent.base+"/")) {
		t.Errorf("registry %+v", r)
	}
	trigger := shell(1, 101, `echo "hello $1 $2/$3"; echo oops >&2`)
	if r := agent.call(t, "/run", testToken, trigger); r.Code != codeSuccess {
		t.Fatalf("run: %+v", r)
	}
	if c := waitCallback(t, admin, 101); c.HandleCode != codeSuccess || c.LogDateTim != trigger.LogDateTime {
		t.Errorf("callback %+v", c)
	}
	calls := agent.kube.Calls()
	if len(calls) != 1 || calls[0].Namespace != "shop" || calls[0].Pod != "billing-0" || calls[0].Container != "app" {
		t.Errorf("exec calls %+v", calls)
	}
	r := agent.call(t, "/log", testToken, logRequest{LogDateTim: trigger.LogDateTime, LogID: 101, FromLineNum: 1})
	data, _ := json.Marshal(r.Data)
	var lr logResult
	_ = json.Unmarshal(data, &lr)
	if r.Code != codeSuccess || !strings.Contains(lr.LogContent, "hello p1 0/1\n") || !strings.Contains(lr.LogContent, "oops") || strings.Contains(lr.LogContent, "xxl-agent-pid") || !lr.IsEnd {
		t.Errorf("log %+v", lr)
	}
	// Paging: from the last line on, only the last line.
	r = agent.call(t, "/log", testToken, logRequest{LogDateTim: trigger.LogDateTime, LogID: 101, FromLineNum: lr.ToLineNum})
	data, _ = json.Marshal(r.Data)
	_ = json.Unmarshal(data, &lr)
	if strings.Count(lr.LogContent, "\n") != 1 || !strings.Contains(lr.LogContent, "finished, handleCode=200") {
		t.Errorf("last page %+v", lr)
	}
	agent.stop()
	if len(admin.removed) != 1 || admin.removed[0].RegistryKey != "billing" {
		t.Errorf("registryRemove %+v", admin.removed)
	}
}

func TestAccessTokenRequiredBothWays(t *testing.T) {
	admin := startAdmin(t)
	agent := startAgent(t, admin, t.TempDir(), nil)
	for _, token := range []string{"", "wrong"} {
		if r := agent.call(t, "/run", token, shell(1, 1, "touch /tmp/never")); r.Code != codeFail || r.Msg != "The access token is wrong." {
			t.Errorf("token %q: %+v", token, r)
		}
	}
	if len(agent.kube.Calls()) != 0 {
		t.Error("a call without the token reached the exec API")
	}
	if r := agent.call(t, "/beat", testToken, nil); r.Code != codeSuccess {
		t.Errorf("beat %+v", r)
	}
	eventually(t, "registered with the token", func() bool {
		admin.mu.Lock()
		defer admin.mu.Unlock()
		return len(admin.registry) > 0 && admin.badToken == 0
	})
}

func TestFailureTimeoutAndKill(t *testing.T) {
	admin := startAdmin(t)
	agent := startAgent(t, admin, t.TempDir(), nil)
	dir := t.TempDir()
	agent.call(t, "/run", testToken, shell(1, 1, "exit 3"))
	if c := waitCallback(t, admin, 1); c.HandleCode != codeFail || c.HandleMsg != "script exit value(3) is failed" {
		t.Errorf("exit 3: %+v", c)
	}
	timed := shell(2, 2, "sleep 30; touch "+dir+"/timeout-survived")
	timed.ExecutorTimeout = 1
	agent.call(t, "/run", testToken, timed)
	if c := waitCallback(t, admin, 2); c.HandleCode != codeTimeout || c.HandleMsg != "job execute timeout" {
		t.Errorf("timeout: %+v", c)
	}
	agent.call(t, "/run", testToken, shell(3, 3, "sleep 30 & echo $! > "+dir+"/child; echo $$ > "+dir+"/job; wait"))
	eventually(t, "job 3 started its child", func() bool { b, _ := os.ReadFile(filepath.Join(dir, "job")); return len(b) > 0 })
	eventually(t, "job 3 runs", func() bool { return agent.call(t, "/idleBeat", testToken, jobRequest{3}).Code == codeFail })
	if r := agent.call(t, "/kill", testToken, jobRequest{3}); r.Code != codeSuccess {
		t.Errorf("kill %+v", r)
	}
	if c := waitCallback(t, admin, 3); c.HandleCode != codeFail || !strings.Contains(c.HandleMsg, "killed") {
		t.Errorf("kill: %+v", c)
	}
	if r := agent.call(t, "/kill", testToken, jobRequest{3}); r.Code != codeSuccess || r.Data != "job thread already killed." {
		t.Errorf("second kill %+v", r)
	}
	// The killed job's processes, its child too, are gone: the kill ran in the target container.
	kills := 0
	for _, c := range agent.kube.Calls() {
		if strings.Contains(strings.Join(c.Command, " "), "/proc/$1/task") {
			kills++
		}
	}
	if kills < 2 {
		t.Errorf("want the timeout and the kill to signal the job in the target, got %d kill execs", kills)
	}
	if _, err := os.Stat(filepath.Join(dir, "timeout-survived")); err == nil {
		t.Error("the timed-out job went on running")
	}
	for _, name := range []string{"job", "child"} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		if alive(strings.TrimSpace(string(b))) {
			t.Errorf("the killed job's %s process (%s) lives on", name, b)
		}
	}
}

func TestBlockStrategies(t *testing.T) {
	admin := startAdmin(t)
	agent := startAgent(t, admin, t.TempDir(), nil)
	dir := t.TempDir()
	// Serial: the second waits for the first.
	agent.call(t, "/run", testToken, shell(1, 11, "sleep 0.5; echo first >> "+dir+"/order"))
	agent.call(t, "/run", testToken, shell(1, 12, "echo second >> "+dir+"/order"))
	waitCallback(t, admin, 12)
	if b, _ := os.ReadFile(filepath.Join(dir, "order")); string(b) != "first\nsecond\n" {
		t.Errorf("serial order %q", b)
	}
	// Discard later: refused while one runs.
	agent.call(t, "/run", testToken, shell(2, 21, "sleep 30"))
	eventually(t, "job 2 runs", func() bool { return agent.call(t, "/idleBeat", testToken, jobRequest{2}).Code == codeFail })
	discard := shell(2, 22, "echo never")
	discard.ExecutorBlockStrategy = discardLater
	if r := agent.call(t, "/run", testToken, discard); r.Code != codeFail || !strings.Contains(r.Msg, "Discard Later") {
		t.Errorf("discard later: %+v", r)
	}
	// Cover early: the running one is stopped, the new one runs.
	cover := shell(2, 23, "echo covered")
	cover.ExecutorBlockStrategy = coverEarly
	if r := agent.call(t, "/run", testToken, cover); r.Code != codeSuccess {
		t.Errorf("cover early: %+v", r)
	}
	if c := waitCallback(t, admin, 21); c.HandleCode != codeFail || !strings.Contains(c.HandleMsg, "Cover Early") {
		t.Errorf("covered run: %+v", c)
	}
	if c := waitCallback(t, admin, 23); c.HandleCode != codeSuccess {
		t.Errorf("covering run: %+v", c)
	}
	if _, found := admin.callback(22); found {
		t.Error("the discarded trigger got a callback; the admin records the refusal itself")
	}
}

// readLog asks the agent for a run's log as the admin's log page does.
func (a *testAgent) readLog(t *testing.T, trigger triggerRequest) logResult {
	t.Helper()
	r := a.call(t, "/log", testToken, logRequest{LogDateTim: trigger.LogDateTime, LogID: trigger.LogID, FromLineNum: 1})
	data, _ := json.Marshal(r.Data)
	var lr logResult
	_ = json.Unmarshal(data, &lr)
	return lr
}

func TestTheLogOfAnAcceptedTriggerIsNotEndedBeforeItsRun(t *testing.T) {
	admin := startAdmin(t)
	agent := startAgent(t, admin, t.TempDir(), nil)
	first, queued, killed := shell(4, 41, "sleep 1; echo first"), shell(4, 42, "echo second"), shell(5, 51, "sleep 30")
	agent.call(t, "/run", testToken, first)
	agent.call(t, "/run", testToken, queued)
	if lr := agent.readLog(t, queued); lr.IsEnd || lr.LogContent != "" || lr.ToLineNum != 0 {
		t.Errorf("the queued run's log before it starts: %+v", lr)
	}
	waitCallback(t, admin, 42)
	if lr := agent.readLog(t, queued); !lr.IsEnd || !strings.Contains(lr.LogContent, "second") {
		t.Errorf("the run's log once it finished: %+v", lr)
	}
	// A trigger killed in the queue never runs: its log is then missing and ended, as upstream says.
	agent.call(t, "/run", testToken, killed)
	behind := shell(5, 52, "echo never")
	agent.call(t, "/run", testToken, behind)
	agent.call(t, "/kill", testToken, jobRequest{5})
	waitCallback(t, admin, 52)
	if lr := agent.readLog(t, behind); !lr.IsEnd || lr.LogContent != "readLog fail, logFile not exists" {
		t.Errorf("the log of a trigger killed in the queue: %+v", lr)
	}
	// Nor is an unknown one waited for.
	if lr := agent.readLog(t, shell(6, 61, "")); !lr.IsEnd {
		t.Errorf("the log of a trigger never accepted: %+v", lr)
	}
}

func TestBeanHandlersAndUnknownGlue(t *testing.T) {
	admin := startAdmin(t)
	agent := startAgent(t, admin, t.TempDir(), map[string]string{"report": `echo "report for $1"`})
	bean := triggerRequest{JobID: 5, LogID: 51, LogDateTime: time.Now().UnixMilli(), GlueType: "BEAN", ExecutorHandler: "report", ExecutorParams: "june"}
	if r := agent.call(t, "/run", testToken, bean); r.Code != codeSuccess {
		t.Fatalf("bean %+v", r)
	}
	waitCallback(t, admin, 51)
	r := agent.call(t, "/log", testToken, logRequest{LogDateTim: bean.LogDateTime, LogID: 51, FromLineNum: 1})
	if b, _ := json.Marshal(r.Data); !strings.Contains(string(b), "report for june") {
		t.Errorf("bean log %s", b)
	}
	bean.ExecutorHandler = "missing"
	if r := agent.call(t, "/run", testToken, bean); r.Code != codeFail || !strings.Contains(r.Msg, "job handler [missing] not found") {
		t.Errorf("unknown handler %+v", r)
	}
	groovy := shell(6, 61, "")
	groovy.GlueType = "GLUE_GROOVY"
	if r := agent.call(t, "/run", testToken, groovy); r.Code != codeFail || !strings.Contains(r.Msg, "glueType[GLUE_GROOVY] is not valid") {
		t.Errorf("groovy %+v", r)
	}
}

func TestCallbacksSurviveAnUnreachableAdminAndARestart(t *testing.T) {
	admin := startAdmin(t)
	dataDir := t.TempDir()
	agent := startAgent(t, admin, dataDir, nil)
	admin.setDown(true)
	agent.call(t, "/run", testToken, shell(1, 71, "echo spooled"))
	eventually(t, "the result is spooled", func() bool {
		entries, _ := os.ReadDir(filepath.Join(dataDir, "callbacks"))
		return len(entries) == 1
	})
	agent.stop()
	if _, found := admin.callback(71); found {
		t.Fatal("delivered while the admin was down")
	}
	admin.setDown(false)
	startAgent(t, admin, dataDir, nil)
	if c := waitCallback(t, admin, 71); c.HandleCode != codeSuccess {
		t.Errorf("callback after restart %+v", c)
	}
	eventually(t, "the spool is empty", func() bool {
		entries, _ := os.ReadDir(filepath.Join(dataDir, "callbacks"))
		return len(entries) == 0
	})
}

func TestAnUnboundServiceAccountIsAClearFailure(t *testing.T) {
	admin := startAdmin(t)
	agent := startAgent(t, admin, t.TempDir(), nil)
	agent.kube.Forbid = true
	agent.call(t, "/run", testToken, shell(1, 81, "echo hi"))
	c := waitCallback(t, admin, 81)
	if c.HandleCode != codeFail || !strings.Contains(c.HandleMsg, "forbidden") || !strings.Contains(c.HandleMsg, "not bound") {
		t.Errorf("callback %+v", c)
	}
}

func TestAnAdmissionDenialIsNotReportedAsMissingRBAC(t *testing.T) {
	admin := startAdmin(t)
	agent := startAgent(t, admin, t.TempDir(), nil)
	agent.kube.Deny = `pods "billing-0" is forbidden: ValidatingAdmissionPolicy 'outrigger-exec-guard' denied request: an agent may exec only into its own pod`
	agent.call(t, "/run", testToken, shell(1, 82, "echo hi"))
	c := waitCallback(t, admin, 82)
	if c.HandleCode != codeFail || !strings.Contains(c.HandleMsg, "refused by admission") || !strings.Contains(c.HandleMsg, "its own pod") || strings.Contains(c.HandleMsg, "not bound") {
		t.Errorf("callback %+v", c)
	}
}

func TestMetrics(t *testing.T) {
	admin := startAdmin(t)
	agent := startAgent(t, admin, t.TempDir(), nil)
	agent.call(t, "/run", testToken, shell(1, 91, "true"))
	waitCallback(t, admin, 91)
	agent.call(t, "/beat", "wrong", nil)
	(&testAgent{url: agent.base}).call(t, "/beat", testToken, nil)
	(&testAgent{url: agent.base}).call(t, "/run", testToken, nil)
	eventually(t, "metrics count the run and no pending callback", func() bool {
		resp, err := http.Get(agent.base + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), `xxl_agent_runs_total{result="success"} 1`) && strings.Contains(string(b), "xxl_agent_callbacks_pending 0") &&
			strings.Contains(string(b), "xxl_agent_run_duration_seconds_count 1") && strings.Contains(string(b), `xxl_agent_build_info{version="dev"} 1`) &&
			strings.Contains(string(b), `xxl_agent_refused_calls_total{reason="address"} 2`) && strings.Contains(string(b), `xxl_agent_refused_calls_total{reason="token"} 1`)
	})
}

// alive: the process exists and is not a zombie.
func alive(pid string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// The access token is every executor's: a caller who holds it and reaches the port, but does not
// know the address the agent registered, runs nothing.
func TestCallsOutsideTheRegisteredAddressRunNothing(t *testing.T) {
	admin := startAdmin(t)
	agent := startAgent(t, admin, t.TempDir(), nil)
	key := strings.TrimPrefix(agent.url, agent.base+"/")
	guesses := []string{"", "/" + strings.Repeat("0", 32), "/" + key[:31], "/" + key + "0", "/" + strings.ToUpper(key), "/" + key + "/..", "/x/" + key}
	for _, prefix := range guesses {
		for _, path := range []string{"/run", "/beat", "/log", "/kill", "/idleBeat"} {
			r := (&testAgent{url: agent.base + prefix}).call(t, path, testToken, shell(1, 1, "touch /tmp/never"))
			if r.Code != codeFail || !strings.Contains(r.Msg, "not found") {
				t.Errorf("%s%s: %+v", prefix, path, r)
			}
		}
	}
	if len(agent.kube.Calls()) != 0 {
		t.Error("a call outside the registered address reached the exec API")
	}
	if r := agent.call(t, "/beat", testToken, nil); r.Code != codeSuccess {
		t.Errorf("beat at the registered address: %+v", r)
	}
}

func TestTheExecutorKeyIsThePods(t *testing.T) {
	dataDir := t.TempDir()
	admin := startAdmin(t)
	first := startAgent(t, admin, dataDir, nil)
	first.stop()
	again := startAgent(t, admin, dataDir, nil)
	keyOf := func(a *testAgent) string { return strings.TrimPrefix(a.url, a.base) }
	if keyOf(again) != keyOf(first) {
		t.Errorf("a restarted agent registers %s, the admins hold %s", again.url, first.url)
	}
	if other := startAgent(t, admin, t.TempDir(), nil); keyOf(other) == keyOf(first) {
		t.Error("two pods share an executor key")
	}
	info, err := os.Stat(filepath.Join(dataDir, keyDir, keyFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("key file %v %v", info, err)
	}
}

// A link planted as the key file (by a container that mounts the data volume) is never followed:
// the agent makes a key of its own in its place.
func TestAPlantedKeyLinkIsReplaced(t *testing.T) {
	dataDir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "known")
	if err := os.WriteFile(outside, []byte(strings.Repeat("a", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dataDir, keyDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dataDir, keyDir, keyFile)); err != nil {
		t.Fatal(err)
	}
	key, err := executorKey(dataDir)
	if err != nil || key == strings.Repeat("a", 32) || !keyPattern.MatchString(key) {
		t.Fatalf("key %q, %v", key, err)
	}
	if info, err := os.Lstat(filepath.Join(dataDir, keyDir, keyFile)); err != nil || !info.Mode().IsRegular() {
		t.Errorf("the key file is %v, %v", info, err)
	}
	if data, _ := os.ReadFile(outside); string(data) != strings.Repeat("a", 32) {
		t.Error("the file outside was written")
	}
}

func TestAddressPrintsTheRegisteredAddress(t *testing.T) {
	cfg, err := readConfig(env(validEnv()))
	if err != nil {
		t.Fatal(err)
	}
	cfg.dataDir = t.TempDir()
	if _, err := readExecutorKey(cfg.dataDir); err == nil {
		t.Fatal("a key before the agent made one")
	}
	key, err := executorKey(cfg.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if got := registeredAddress(cfg, key); got != "http://10.0.0.7:9999/"+key+"/" {
		t.Errorf("address %s", got)
	}
}
