package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// config is the agent's whole configuration, read once from the environment the injector gives it.
type config struct {
	admins      []string // admin base URLs, without a trailing slash
	appName     string
	accessToken string
	address     string // the executor address registered with the admins: http://<pod IP>:<port>/
	listen      string
	target      target
	handlers    map[string]string // bean handler name -> shell command run in the target container
	dataDir     string            // run logs and the callback spool (an emptyDir)
	kubeDir     string            // token, ca.crt of the pod's ServiceAccount
	kubeAPI     string            // https://host:port of the API server
	logDays     int
}

type target struct{ namespace, pod, container string }

func (t target) String() string { return t.namespace + "/" + t.pod + " container " + t.container }

// allowNoToken is the one way to run without an access token; loud on purpose: /run is remote command execution.
const allowNoToken = "XXL_AGENT_DANGEROUSLY_ALLOW_NO_ACCESS_TOKEN"

// readConfig parses the environment; every error names its variable, and all of them are reported at once.
func readConfig(getenv func(string) string) (config, error) {
	var problems []string
	bad := func(name, why string) { problems = append(problems, name+": "+why) }
	need := func(name string) string {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			bad(name, "required, not set")
		}
		return v
	}
	c := config{
		appName:  need("XXL_JOB_NAME"),
		target:   target{namespace: need("NAMESPACE"), pod: need("POD_NAME"), container: need("CONTAINER_NAME")},
		dataDir:  or(getenv("XXL_AGENT_DATA_DIR"), "/var/lib/xxl-agent"),
		kubeDir:  or(getenv("XXL_AGENT_SERVICE_ACCOUNT_DIR"), "/var/run/secrets/kubernetes.io/serviceaccount"),
		handlers: map[string]string{},
	}
	if addrs := need("XXL_JOB_ADDR"); addrs != "" {
		for _, a := range strings.Split(addrs, ",") {
			a = strings.TrimRight(strings.TrimSpace(a), "/")
			u, err := url.Parse(a)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad("XXL_JOB_ADDR", fmt.Sprintf("%q is not an http(s) URL (comma-separated admin addresses, e.g. http://xxl-job-admin:8080/xxl-job-admin)", a))
				continue
			}
			c.admins = append(c.admins, a)
		}
	}
	if len(c.appName) > 64 {
		bad("XXL_JOB_NAME", "longer than 64 characters (xxl-job-admin's limit for an app name)")
	}
	c.accessToken = getenv("XXL_JOB_ACCESS_TOKEN")
	switch getenv(allowNoToken) {
	case "", "false":
		if c.accessToken == "" {
			bad("XXL_JOB_ACCESS_TOKEN", "required (the port is reachable from the pod network and /run runs commands); set "+allowNoToken+"=true to run without one")
		}
	case "true":
	default:
		bad(allowNoToken, "must be true or false")
	}
	port := or(getenv("PORT"), "9999")
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		bad("PORT", fmt.Sprintf("%q is not a port number", port))
	}
	c.listen = ":" + port
	if a := getenv("XXL_JOB_EXECUTOR_ADDRESS"); a != "" {
		c.address = strings.TrimRight(a, "/") + "/"
	} else if ip := need("POD_IP"); ip != "" {
		if net.ParseIP(ip) == nil {
			bad("POD_IP", fmt.Sprintf("%q is not an IP address", ip))
		}
		c.address = "http://" + net.JoinHostPort(ip, port) + "/"
	}
	if h := getenv("XXL_AGENT_HANDLERS"); h != "" {
		if err := json.Unmarshal([]byte(h), &c.handlers); err != nil {
			bad("XXL_AGENT_HANDLERS", "must be a JSON object of bean handler name to shell command: "+err.Error())
		}
	}
	days := or(getenv("XXL_AGENT_LOG_RETENTION_DAYS"), "7")
	if n, err := strconv.Atoi(days); err != nil || n < 1 {
		bad("XXL_AGENT_LOG_RETENTION_DAYS", fmt.Sprintf("%q is not a whole number of days (at least 1)", days))
	} else {
		c.logDays = n
	}
	if api := getenv("XXL_AGENT_KUBE_API"); api != "" {
		c.kubeAPI = strings.TrimRight(api, "/")
	} else if host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT"); host != "" && port != "" {
		c.kubeAPI = "https://" + net.JoinHostPort(host, port)
	} else {
		bad("KUBERNETES_SERVICE_HOST", "not set: the agent runs in a pod (or set XXL_AGENT_KUBE_API)")
	}
	if len(problems) > 0 {
		return c, fmt.Errorf("invalid configuration: %s", strings.Join(problems, "; "))
	}
	return c, nil
}

func or(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}

// logRetention is how long run logs are kept for /log.
func (c config) logRetention() time.Duration { return time.Duration(c.logDays) * 24 * time.Hour }
