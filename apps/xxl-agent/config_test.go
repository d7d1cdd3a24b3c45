package main

import (
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func validEnv() map[string]string {
	return map[string]string{
		"XXL_JOB_ADDR": "http://admin-a:8080/xxl-job-admin/, http://admin-b:8080/xxl-job-admin", "XXL_JOB_NAME": "billing",
		"XXL_JOB_ACCESS_TOKEN": "s3cret", "NAMESPACE": "shop", "POD_NAME": "billing-0", "CONTAINER_NAME": "app", "POD_IP": "10.0.0.7",
		"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443",
	}
}

func TestReadConfigNamesEveryMissingVariable(t *testing.T) {
	_, err := readConfig(env(nil))
	if err == nil {
		t.Fatal("an empty environment was accepted")
	}
	for _, name := range []string{"XXL_JOB_ADDR", "XXL_JOB_NAME", "XXL_JOB_ACCESS_TOKEN", "NAMESPACE", "POD_NAME", "CONTAINER_NAME", "POD_IP", "KUBERNETES_SERVICE_HOST"} {
		if !strings.Contains(err.Error(), name+":") {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
}

func TestReadConfigValid(t *testing.T) {
	c, err := readConfig(env(validEnv()))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.admins, " ") != "http://admin-a:8080/xxl-job-admin http://admin-b:8080/xxl-job-admin" {
		t.Errorf("admins %q", c.admins)
	}
	if c.address != "http://10.0.0.7:9999/" || c.listen != ":9999" || c.kubeAPI != "https://10.96.0.1:443" || c.target != (target{"shop", "billing-0", "app"}) {
		t.Errorf("unexpected %+v", c)
	}
}

func TestReadConfigRefusesBadValuesNamingThem(t *testing.T) {
	cases := map[string]string{
		"XXL_JOB_ADDR":                 "admin:8080",
		"PORT":                         "99999",
		"POD_IP":                       "not-an-ip",
		"XXL_AGENT_HANDLERS":           "[1]",
		"XXL_AGENT_LOG_RETENTION_DAYS": "0",
		allowNoToken:                   "yes",
	}
	for name, value := range cases {
		e := validEnv()
		e[name] = value
		if _, err := readConfig(env(e)); err == nil || !strings.Contains(err.Error(), name+":") {
			t.Errorf("%s=%q: want an error naming it, got %v", name, value, err)
		}
	}
}

func TestNoAccessTokenOnlyWithTheLoudSetting(t *testing.T) {
	e := validEnv()
	delete(e, "XXL_JOB_ACCESS_TOKEN")
	if _, err := readConfig(env(e)); err == nil || !strings.Contains(err.Error(), allowNoToken) {
		t.Fatalf("want the refusal to name %s, got %v", allowNoToken, err)
	}
	e[allowNoToken] = "true"
	if _, err := readConfig(env(e)); err != nil {
		t.Fatal(err)
	}
}
