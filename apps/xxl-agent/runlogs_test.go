package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestALogThatCannotBeCreatedIsNotAwaited(t *testing.T) {
	dir := t.TempDir()
	logs, err := newRunLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Now().UnixMilli()
	request := logRequest{LogDateTim: when, LogID: 7, FromLineNum: 1}
	logs.expect(7)
	if lr := logs.read(request); lr.IsEnd {
		t.Errorf("an accepted trigger's log before its run: %+v", lr)
	}
	// The day's directory is a file: the run's log cannot be created.
	if err := os.WriteFile(filepath.Join(dir, time.UnixMilli(when).UTC().Format("2006-01-02")), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := logs.create(when, 7); err == nil {
		t.Fatal("the log was created under a file")
	}
	if lr := logs.read(request); !lr.IsEnd || lr.LogContent != "readLog fail, logFile not exists" {
		t.Errorf("the log of a run that could not write one: %+v", lr)
	}
}
