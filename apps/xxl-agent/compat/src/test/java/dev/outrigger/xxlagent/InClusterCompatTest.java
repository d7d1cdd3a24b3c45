package dev.outrigger.xxlagent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.xxl.job.core.constant.ExecutorBlockStrategyEnum;
import com.xxl.job.core.openapi.ExecutorBiz;
import com.xxl.job.core.openapi.model.CallbackRequest;
import com.xxl.job.core.openapi.model.IdleBeatRequest;
import com.xxl.job.core.openapi.model.KillRequest;
import com.xxl.job.core.openapi.model.LogRequest;
import com.xxl.job.core.openapi.model.LogResult;
import com.xxl.job.core.openapi.model.RegistryRequest;
import com.xxl.job.core.openapi.model.TriggerRequest;
import com.xxl.tool.json.GsonTool;
import com.xxl.tool.response.Response;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * xxl-job-admin's executor client against the agent running in an opted-in pod of the local
 * cluster (e2e/cluster/xxl-agent-compat.e2e.ts starts it and runs this class): /beat, /idleBeat,
 * /run, /kill and /log over the pod network, the jobs running in the pod's business container.
 * The agent's registry and callback requests reach the admin stand-in in the pod's namespace
 * (pods do not reach this host); this class reads them from its log, as they arrived, and decodes
 * them with xxl-job-core's own models.
 *
 * System properties: agent.address (the address the agent registered: http://pod IP:9999/executor key), agent.token, agent.appName,
 * admin.log.command (a shell command printing the stand-in's log), agent.stop.command (a shell
 * command that deletes the agent's pod).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class InClusterCompatTest {
    static String agentUrl;
    static String token;
    static ExecutorBiz executor;
    static long nextLogId = System.currentTimeMillis();

    @BeforeAll
    static void connect() {
        agentUrl = required("agent.address");
        token = required("agent.token");
        executor = client(token);
    }

    static String required(String name) {
        String value = System.getProperty(name, "");
        if (value.isEmpty() || value.startsWith("${")) throw new IllegalStateException("system property " + name + " is not set");
        return value;
    }

    static ExecutorBiz client(String token) {
        return AdminCalls.client(agentUrl, token);
    }

    /** The bodies of the calls to `api` (registry, registryRemove, callback) the admin stand-in accepted, in order. */
    static List<String> accepted(String api) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", required("admin.log.command")).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) throw new AssertionError("admin.log.command failed: " + log);
        String prefix = "admin accepted POST /api/" + api + " ";
        List<String> bodies = new ArrayList<>();
        for (String line : log.split("\n")) {
            if (line.startsWith(prefix)) bodies.add(line.substring(prefix.length()));
        }
        return bodies;
    }

    static List<RegistryRequest> registrations(String api) throws Exception {
        List<RegistryRequest> out = new ArrayList<>();
        for (String body : accepted(api)) out.add(GsonTool.fromJson(body, RegistryRequest.class));
        return out;
    }

    static Optional<CallbackRequest> callback(long logId) throws Exception {
        for (String body : accepted("callback")) {
            List<CallbackRequest> list = GsonTool.fromJson(body, List.class, CallbackRequest.class);
            for (CallbackRequest c : list) if (c.getLogId() == logId) return Optional.of(c);
        }
        return Optional.empty();
    }

    static <T> T eventually(String what, Callable<Optional<T>> attempt) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (System.nanoTime() < deadline) {
            Optional<T> found = attempt.call();
            if (found.isPresent()) return found.get();
            Thread.sleep(500);
        }
        throw new AssertionError("timed out waiting for " + what);
    }

    static CallbackRequest awaitCallback(long logId) throws Exception {
        return eventually("the callback of log " + logId, () -> callback(logId));
    }

    static TriggerRequest shellTrigger(int jobId, String script, String blockStrategy, String params) {
        return AdminCalls.shellTrigger(jobId, ++nextLogId, script, blockStrategy, params);
    }

    @Test
    @Order(1)
    void registersAsAnExecutorAtItsPodAddress() throws Exception {
        RegistryRequest r = eventually("the agent's registration", () -> registrations("registry").stream()
                .filter(x -> Objects.equals(x.getRegistryValue(), agentUrl + "/")).findFirst());
        assertEquals("EXECUTOR", r.getRegistryGroup());
        assertEquals(required("agent.appName"), r.getRegistryKey());
    }

    @Test
    @Order(2)
    void beatAndIdleBeat() {
        Response<String> beat = executor.beat();
        assertTrue(beat.isSuccess(), beat.getMsg());
        assertTrue(executor.idleBeat(new IdleBeatRequest(41)).isSuccess());
    }

    @Test
    @Order(3)
    void runsInTheBusinessContainerWithCallbackAndLog() throws Exception {
        TriggerRequest t = shellTrigger(41, "echo \"mark: $MARK, param: $1\"", ExecutorBlockStrategyEnum.SERIAL_EXECUTION.name(), "compat");
        Response<String> run = executor.run(t);
        assertTrue(run.isSuccess(), run.getMsg());
        CallbackRequest c = awaitCallback(t.getLogId());
        assertEquals(200, c.getHandleCode());
        assertEquals(t.getLogDateTime(), c.getLogDateTim());

        Response<LogResult> log = executor.log(new LogRequest(t.getLogDateTime(), t.getLogId(), 1));
        assertTrue(log.isSuccess(), log.getMsg());
        LogResult page = log.getData();
        assertEquals(1, page.getFromLineNum());
        assertTrue(page.getLogContent().contains("mark: business-container, param: compat"), page.getLogContent());
        assertTrue(page.isEnd());
    }

    @Test
    @Order(4)
    void blockStrategiesKillAndTimeout() throws Exception {
        String waits = "sleep 600";
        TriggerRequest first = shellTrigger(42, waits, ExecutorBlockStrategyEnum.SERIAL_EXECUTION.name(), "");
        assertTrue(executor.run(first).isSuccess());
        eventually("job 42 busy", () -> executor.idleBeat(new IdleBeatRequest(42)).isSuccess() ? Optional.empty() : Optional.of(true));
        Response<String> discarded = executor.run(shellTrigger(42, waits, ExecutorBlockStrategyEnum.DISCARD_LATER.name(), ""));
        assertFalse(discarded.isSuccess());
        assertEquals("block strategy effect: Discard Later", discarded.getMsg());

        TriggerRequest cover = shellTrigger(42, waits, ExecutorBlockStrategyEnum.COVER_EARLY.name(), "");
        assertTrue(executor.run(cover).isSuccess());
        CallbackRequest covered = awaitCallback(first.getLogId());
        assertEquals(500, covered.getHandleCode());
        assertTrue(covered.getHandleMsg().contains("Cover Early"), covered.getHandleMsg());

        eventually("job 42 busy with the new trigger", () -> executor.idleBeat(new IdleBeatRequest(42)).isSuccess() ? Optional.empty() : Optional.of(true));
        assertTrue(executor.kill(new KillRequest(42)).isSuccess());
        CallbackRequest killed = awaitCallback(cover.getLogId());
        assertEquals(500, killed.getHandleCode());
        assertEquals("job killed by the scheduling center", killed.getHandleMsg());
        assertTrue(executor.idleBeat(new IdleBeatRequest(42)).isSuccess());

        TriggerRequest timed = shellTrigger(43, waits, ExecutorBlockStrategyEnum.SERIAL_EXECUTION.name(), "");
        timed.setExecutorTimeout(2);
        assertTrue(executor.run(timed).isSuccess());
        CallbackRequest timedOut = awaitCallback(timed.getLogId());
        assertEquals(502, timedOut.getHandleCode());
        assertEquals("job execute timeout", timedOut.getHandleMsg());
    }

    @Test
    @Order(5)
    void wrongOrMissingTokenIsRefused() {
        for (String wrong : new String[] {token + "-not", ""}) {
            Response<String> r = client(wrong).run(shellTrigger(44, "echo never", ExecutorBlockStrategyEnum.SERIAL_EXECUTION.name(), ""));
            assertFalse(r.isSuccess());
            assertEquals("The access token is wrong.", r.getMsg());
            assertFalse(client(wrong).beat().isSuccess());
        }
    }

    @Test
    @Order(6)
    void deregistersWhenItsPodGoes() throws Exception {
        Process p = new ProcessBuilder("sh", "-c", required("agent.stop.command")).inheritIO().start();
        assertEquals(0, p.waitFor(), "agent.stop.command failed");
        RegistryRequest r = eventually("the agent's registryRemove", () -> registrations("registryRemove").stream()
                .filter(x -> Objects.equals(x.getRegistryValue(), agentUrl + "/")).findFirst());
        assertEquals("EXECUTOR", r.getRegistryGroup());
        assertEquals(required("agent.appName"), r.getRegistryKey());
    }
}
