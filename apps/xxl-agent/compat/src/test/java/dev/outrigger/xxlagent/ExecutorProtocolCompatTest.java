package dev.outrigger.xxlagent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import com.xxl.job.core.constant.Const;
import com.xxl.job.core.constant.ExecutorBlockStrategyEnum;
import com.xxl.job.core.glue.GlueTypeEnum;
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
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * xxl-job-admin's executor client (the HttpTool proxy of ExecutorBiz, built as the admin builds it)
 * against the agent, run here as a process whose exec target is the fake-kube fixture; an admin
 * stand-in decodes the agent's requests with xxl-job-core's own models, as xxl-job-admin's
 * OpenApiController does.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ExecutorProtocolCompatTest {
    static final String TOKEN = "compat-token";
    static final String APP = "compat-app";
    static final List<RegistryRequest> registered = new CopyOnWriteArrayList<>();
    static final List<RegistryRequest> removed = new CopyOnWriteArrayList<>();
    static final Map<Long, CallbackRequest> callbacks = new ConcurrentHashMap<>();
    static final List<String> refusedTokens = new CopyOnWriteArrayList<>();
    // JUnit removes both once the class's tests are done (the agent is stopped first, in stop()).
    @TempDir static Path sa;
    @TempDir static Path data;
    static HttpServer admin;
    static Process fakeKube;
    static Process agent;
    /** Where the agent listens (its probes); the admin calls it at agentUrl, the address it registered. */
    static String agentBase;
    static String agentUrl;
    static ExecutorBiz executor;

    @BeforeAll
    static void start() throws Exception {
        admin = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        admin.createContext("/xxl-job-admin/api/", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String token = exchange.getRequestHeaders().getFirst(Const.XXL_JOB_ACCESS_TOKEN);
            String uri = exchange.getRequestURI().getPath().substring("/xxl-job-admin/api/".length());
            Response<String> answer = Response.ofSuccess();
            if (!TOKEN.equals(token)) {
                refusedTokens.add(String.valueOf(token));
                answer = Response.ofFail("The access token is wrong.");
            } else if (uri.equals("registry")) {
                registered.add(GsonTool.fromJson(body, RegistryRequest.class));
            } else if (uri.equals("registryRemove")) {
                removed.add(GsonTool.fromJson(body, RegistryRequest.class));
            } else if (uri.equals("callback")) {
                List<CallbackRequest> list = GsonTool.fromJson(body, List.class, CallbackRequest.class);
                for (CallbackRequest c : list) callbacks.put(c.getLogId(), c);
            } else {
                answer = Response.ofFail("invalid request, uri-mapping(" + uri + ") not found.");
            }
            byte[] out = GsonTool.toJson(answer).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, out.length);
            exchange.getResponseBody().write(out);
            exchange.close();
        });
        admin.start();

        fakeKube = new ProcessBuilder(System.getProperty("fakekube.bin"), sa.toString(), "sa-token")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String kubeUrl = new BufferedReader(new InputStreamReader(fakeKube.getInputStream())).readLine();

        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        agentBase = "http://127.0.0.1:" + port;
        ProcessBuilder pb = new ProcessBuilder(System.getProperty("agent.bin")).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.INHERIT);
        Map<String, String> env = pb.environment();
        env.put("XXL_JOB_ADDR", "http://127.0.0.1:" + admin.getAddress().getPort() + "/xxl-job-admin");
        env.put("XXL_JOB_NAME", APP);
        env.put("XXL_JOB_ACCESS_TOKEN", TOKEN);
        env.put("NAMESPACE", "shop");
        env.put("POD_NAME", "billing-0");
        env.put("CONTAINER_NAME", "app");
        env.put("POD_IP", "127.0.0.1");
        env.put("PORT", String.valueOf(port));
        env.put("XXL_AGENT_KUBE_API", kubeUrl);
        env.put("XXL_AGENT_SERVICE_ACCOUNT_DIR", sa.toString());
        env.put("XXL_AGENT_DATA_DIR", data.toString());
        env.put("XXL_AGENT_HANDLERS", "{\"demoJobHandler\":\"echo demo handler with $1\"}");
        agent = pb.start();
        HttpClient http = HttpClient.newHttpClient();
        eventually("the agent is ready", () -> {
            try {
                return http.send(HttpRequest.newBuilder(URI.create(agentBase + "/readyz")).build(), HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
            } catch (Exception e) {
                return false;
            }
        });
        // As the admin learns it: the address the agent registered, the executor key its path.
        eventually("the agent registered", () -> !registered.isEmpty());
        agentUrl = registered.get(0).getRegistryValue().replaceAll("/$", "");
        executor = client(TOKEN);
    }

    static ExecutorBiz client(String token) {
        return AdminCalls.client(agentUrl, token);
    }

    @AfterAll
    static void stop() throws Exception {
        if (agent != null) agent.destroy();
        if (agent != null) agent.waitFor();
        if (fakeKube != null) fakeKube.destroy();
        if (admin != null) admin.stop(0);
    }

    static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) return;
            Thread.sleep(50);
        }
        throw new AssertionError("timed out waiting until " + what);
    }

    static TriggerRequest shellTrigger(int jobId, long logId, String script, String blockStrategy) {
        return AdminCalls.shellTrigger(jobId, logId, script, blockStrategy, "param-1");
    }

    @Test
    @Order(1)
    void registersAsAnExecutorWithTheLibrarysModel() throws Exception {
        eventually("the agent registered", () -> !registered.isEmpty());
        RegistryRequest r = registered.get(0);
        assertEquals("EXECUTOR", r.getRegistryGroup());
        assertEquals(APP, r.getRegistryKey());
        assertTrue(r.getRegistryValue().matches("http://127\\.0\\.0\\.1:[0-9]+/[0-9a-f]{32}/"), r.getRegistryValue());
        assertTrue(refusedTokens.isEmpty(), "the agent sent the admin a wrong token: " + refusedTokens);
    }

    @Test
    @Order(2)
    void beatAndIdleBeat() {
        Response<String> beat = executor.beat();
        assertTrue(beat.isSuccess(), beat.getMsg());
        assertTrue(executor.idleBeat(new IdleBeatRequest(1)).isSuccess());
    }

    @Test
    @Order(3)
    void runCallbackAndLog() throws Exception {
        TriggerRequest t = shellTrigger(1, 1001, "echo \"hello from the target: $1\"", ExecutorBlockStrategyEnum.SERIAL_EXECUTION.name());
        Response<String> run = executor.run(t);
        assertTrue(run.isSuccess(), run.getMsg());
        eventually("the callback of log 1001", () -> callbacks.containsKey(1001L));
        CallbackRequest c = callbacks.get(1001L);
        assertEquals(200, c.getHandleCode());
        assertEquals(t.getLogDateTime(), c.getLogDateTim());

        Response<LogResult> log = executor.log(new LogRequest(t.getLogDateTime(), 1001, 1));
        assertTrue(log.isSuccess(), log.getMsg());
        LogResult page = log.getData();
        assertEquals(1, page.getFromLineNum());
        assertTrue(page.getLogContent().contains("hello from the target: param-1"), page.getLogContent());
        assertTrue(page.isEnd());
        assertTrue(page.getToLineNum() >= 3, "lines: " + page.getToLineNum());
    }

    @Test
    @Order(4)
    void beanHandler() throws Exception {
        TriggerRequest t = shellTrigger(2, 1002, "", ExecutorBlockStrategyEnum.SERIAL_EXECUTION.name());
        t.setGlueType(GlueTypeEnum.BEAN.name());
        t.setExecutorHandler("demoJobHandler");
        assertTrue(executor.run(t).isSuccess());
        eventually("the callback of log 1002", () -> callbacks.containsKey(1002L));
        assertTrue(executor.log(new LogRequest(t.getLogDateTime(), 1002, 1)).getData().getLogContent().contains("demo handler with param-1"));
    }

    @Test
    @Order(5)
    void blockStrategiesKillAndTimeout() throws Exception {
        assertTrue(executor.run(shellTrigger(3, 1003, "sleep 60", ExecutorBlockStrategyEnum.SERIAL_EXECUTION.name())).isSuccess());
        eventually("job 3 is busy", () -> !executor.idleBeat(new IdleBeatRequest(3)).isSuccess());
        Response<String> discarded = executor.run(shellTrigger(3, 1004, "true", ExecutorBlockStrategyEnum.DISCARD_LATER.name()));
        assertFalse(discarded.isSuccess());
        assertEquals(500, discarded.getCode());
        assertTrue(executor.run(shellTrigger(3, 1005, "sleep 60", ExecutorBlockStrategyEnum.COVER_EARLY.name())).isSuccess());
        eventually("the covered run's callback", () -> callbacks.containsKey(1003L));
        assertEquals(500, callbacks.get(1003L).getHandleCode());

        assertTrue(executor.kill(new KillRequest(3)).isSuccess());
        eventually("the killed run's callback", () -> callbacks.containsKey(1005L));
        assertEquals(500, callbacks.get(1005L).getHandleCode());
        assertTrue(executor.idleBeat(new IdleBeatRequest(3)).isSuccess());

        TriggerRequest timed = shellTrigger(4, 1006, "sleep 60", ExecutorBlockStrategyEnum.SERIAL_EXECUTION.name());
        timed.setExecutorTimeout(1);
        assertTrue(executor.run(timed).isSuccess());
        eventually("the timed-out run's callback", () -> callbacks.containsKey(1006L));
        assertEquals(502, callbacks.get(1006L).getHandleCode());
    }

    @Test
    @Order(6)
    void wrongOrMissingTokenIsRefused() {
        for (String token : new String[] {"wrong", ""}) {
            Response<String> r = client(token).run(shellTrigger(5, 1007, "echo never", ExecutorBlockStrategyEnum.SERIAL_EXECUTION.name()));
            assertFalse(r.isSuccess());
            assertEquals("The access token is wrong.", r.getMsg());
        }
        assertFalse(client("wrong").beat().isSuccess());
    }

    /** The token is every executor's: the admin's own client, holding it, runs nothing at an address the agent did not register. */
    @Test
    @Order(7)
    void theTokenAloneRunsNothingOutsideTheRegisteredAddress() {
        String key = agentUrl.substring(agentBase.length() + 1);
        for (String url : new String[] {agentBase, agentBase + "/" + "0".repeat(32), agentBase + "/" + key.substring(1)}) {
            Response<String> r = AdminCalls.client(url, TOKEN).run(shellTrigger(6, 1008, "echo never", ExecutorBlockStrategyEnum.SERIAL_EXECUTION.name()));
            assertFalse(r.isSuccess(), url);
            assertTrue(r.getMsg().contains("not found"), r.getMsg());
            assertFalse(AdminCalls.client(url, TOKEN).beat().isSuccess(), url);
        }
        assertFalse(callbacks.containsKey(1008L));
    }

    @Test
    @Order(8)
    void deregistersOnSigterm() throws Exception {
        agent.destroy();
        assertEquals(0, agent.waitFor());
        assertEquals(1, removed.size());
        assertEquals(APP, removed.get(0).getRegistryKey());
        assertEquals(agentUrl + "/", removed.get(0).getRegistryValue());
    }
}
