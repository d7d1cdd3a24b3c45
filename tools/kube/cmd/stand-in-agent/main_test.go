package main

import (
	"strings"
	"testing"
)

func TestReadSettingsNamesEveryMissingVariable(t *testing.T) {
	_, err := readSettings(func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "NAMESPACE, POD_NAME, CONTAINER_NAME") {
		t.Fatalf("want the three variables named, got %v", err)
	}
}

func TestReadSettingsDefaults(t *testing.T) {
	env := map[string]string{"NAMESPACE": "shop", "POD_NAME": "billing-0", "CONTAINER_NAME": "app"}
	s, err := readSettings(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if s.port != "9999" || s.target != (target{"shop", "billing-0", "app"}) || s.command[0] != "sh" {
		t.Fatalf("unexpected settings %+v", s)
	}
}
