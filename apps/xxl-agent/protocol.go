package main

// The XXL-JOB 3.x executor protocol's bodies, as JSON. Field names are the protocol's
// (xxl-job-core's openapi models); logDateTim is spelled that way there.

const (
	tokenHeader = "XXL-JOB-ACCESS-TOKEN"
	beatPeriod  = 30 // seconds: the registry is renewed this often; admins drop an executor after 3 missed beats

	codeSuccess = 200
	codeFail    = 500
	codeTimeout = 502 // a run that exceeded executorTimeout
)

// response is xxl-tool's Response<T>: {code, msg, data}.
type response struct {
	Code int    `json:"code"`
	Msg  string `json:"msg,omitempty"`
	Data any    `json:"data,omitempty"`
}

func ok(data any) response     { return response{Code: codeSuccess, Msg: "Success", Data: data} }
func fail(msg string) response { return response{Code: codeFail, Msg: msg} }

type triggerRequest struct {
	JobID                 int    `json:"jobId"`
	ExecutorHandler       string `json:"executorHandler"`
	ExecutorParams        string `json:"executorParams"`
	ExecutorBlockStrategy string `json:"executorBlockStrategy"`
	ExecutorTimeout       int    `json:"executorTimeout"` // seconds, 0: none
	LogID                 int64  `json:"logId"`
	LogDateTime           int64  `json:"logDateTime"` // epoch milliseconds
	GlueType              string `json:"glueType"`
	GlueSource            string `json:"glueSource"`
	GlueUpdatetime        int64  `json:"glueUpdatetime"`
	BroadcastIndex        int    `json:"broadcastIndex"`
	BroadcastTotal        int    `json:"broadcastTotal"`
}

type jobRequest struct {
	JobID int `json:"jobId"`
}

type logRequest struct {
	LogDateTim  int64 `json:"logDateTim"`
	LogID       int64 `json:"logId"`
	FromLineNum int   `json:"fromLineNum"`
}

type logResult struct {
	FromLineNum int    `json:"fromLineNum"`
	ToLineNum   int    `json:"toLineNum"`
	LogContent  string `json:"logContent"`
	IsEnd       bool   `json:"isEnd"`
}

type registryRequest struct {
	RegistryGroup string `json:"registryGroup"`
	RegistryKey   string `json:"registryKey"`
	RegistryValue string `json:"registryValue"`
}

type callbackRequest struct {
	LogID      int64  `json:"logId"`
	LogDateTim int64  `json:"logDateTim"`
	HandleCode int    `json:"handleCode"`
	HandleMsg  string `json:"handleMsg"`
}

// Block strategies, as the admin names them.
const (
	serialExecution = "SERIAL_EXECUTION"
	discardLater    = "DISCARD_LATER"
	coverEarly      = "COVER_EARLY"
)
