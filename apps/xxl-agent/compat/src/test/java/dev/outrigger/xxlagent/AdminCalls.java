package dev.outrigger.xxlagent;

import com.xxl.job.core.constant.Const;
import com.xxl.job.core.glue.GlueTypeEnum;
import com.xxl.job.core.openapi.ExecutorBiz;
import com.xxl.job.core.openapi.model.TriggerRequest;
import com.xxl.tool.http.HttpTool;

/** The calls xxl-job-admin makes to an executor, built as the admin builds them: both compat tests use these. */
final class AdminCalls {
    private AdminCalls() {}

    /** The client exactly as xxl-job-admin builds it (XxlJobAdminBootstrap.getExecutorBiz). */
    static ExecutorBiz client(String executorUrl, String token) {
        return HttpTool.createClient().url(executorUrl).timeout(3 * 1000).header(Const.XXL_JOB_ACCESS_TOKEN, token).proxy(ExecutorBiz.class);
    }

    /** A GLUE_SHELL trigger with one version of the job's code (a newer one would replace the job's queue) and no timeout. */
    static TriggerRequest shellTrigger(int jobId, long logId, String script, String blockStrategy, String params) {
        TriggerRequest t = new TriggerRequest();
        t.setJobId(jobId);
        t.setExecutorHandler("");
        t.setExecutorParams(params);
        t.setExecutorBlockStrategy(blockStrategy);
        t.setExecutorTimeout(0);
        t.setLogId(logId);
        t.setLogDateTime(System.currentTimeMillis());
        t.setGlueType(GlueTypeEnum.GLUE_SHELL.name());
        t.setGlueSource(script);
        t.setGlueUpdatetime(1);
        t.setBroadcastIndex(0);
        t.setBroadcastTotal(1);
        return t;
    }
}
