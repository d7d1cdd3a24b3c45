package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// A file or a day's directory planted as a symlink out of the log directory (another container of
// the pod mounting the agent's data volume could) is neither read by /log nor written by a run.
func TestLogsNeverFollowALinkOutOfTheirDirectory(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "token")
	if err := os.WriteFile(secret, []byte("SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "1.log"), []byte("SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logs, err := newRunLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	fileDay := time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
	dirDay := time.Date(2999, 1, 2, 0, 0, 0, 0, time.UTC)
	if err := os.MkdirAll(filepath.Join(dir, "2999-01-01"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "2999-01-01", "1.log")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "2999-01-02")); err != nil {
		t.Fatal(err)
	}
	for _, day := range []time.Time{fileDay, dirDay} {
		lr := logs.read(logRequest{LogDateTim: day.UnixMilli(), LogID: 1, FromLineNum: 1})
		if strings.Contains(lr.LogContent, "SECRET") || !lr.IsEnd {
			t.Errorf("%s: /log read through a planted link: %+v", day.Format("2006-01-02"), lr)
		}
		if f, err := logs.create(day.UnixMilli(), 1); err == nil {
			_, _ = f.WriteString("written")
			logs.close(1, f)
			t.Errorf("%s: a run wrote through a planted link", day.Format("2006-01-02"))
		}
	}
	for _, p := range []string{secret, filepath.Join(outside, "1.log")} {
		if b, _ := os.ReadFile(p); string(b) != "SECRET\n" {
			t.Errorf("%s changed: %q", p, b)
		}
	}
}

// The log directory itself lies in the data volume: one planted as a link out of it is refused,
// rather than becoming the root that every log is read from and written to.
func TestALogDirectoryLinkedOutOfTheVolumeIsRefused(t *testing.T) {
	data, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(outside, "2999-01-01"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "2999-01-01", "1.log"), []byte("SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(data, "logs")); err != nil {
		t.Fatal(err)
	}
	logs, err := newRunLogs(filepath.Join(data, "logs"))
	if err == nil {
		day := time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
		t.Errorf("run logs opened through a planted link: /log answers %+v", logs.read(logRequest{LogDateTim: day.UnixMilli(), LogID: 1, FromLineNum: 1}))
	}
}

// Pruning a day planted as a link removes the link, never what it links to.
func TestPruningALinkedDayKeepsWhatItLinksTo(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	logs, err := newRunLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "1.log"), []byte("SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "2000-01-01")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "2000-01-02"), 0o700); err != nil {
		t.Fatal(err)
	}
	logs.prune(24*time.Hour, time.Date(2000, 2, 1, 0, 0, 0, 0, time.UTC))
	for _, day := range []string{"2000-01-01", "2000-01-02"} {
		if _, err := os.Lstat(filepath.Join(dir, day)); !os.IsNotExist(err) {
			t.Errorf("%s was not pruned: %v", day, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "1.log")); string(b) != "SECRET\n" {
		t.Errorf("the linked directory's file after pruning: %q, %v", b, err)
	}
}

// A FIFO planted as a log would hold /log's open for ever, a device such as /dev/zero its read:
// anything but a regular file is no log.
func TestALogThatIsNoRegularFileIsNotRead(t *testing.T) {
	dir := t.TempDir()
	logs, err := newRunLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.MkdirAll(filepath.Join(dir, "2999-01-01"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "2999-01-01", "1.log"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The character device /dev/zero, 1:5 on Linux.
	if err := syscall.Mknod(filepath.Join(dir, "2999-01-01", "2.log"), syscall.S_IFCHR|0o600, 1<<8|5); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{1, 2} {
		done := make(chan logResult, 1)
		go func() { done <- logs.read(logRequest{LogDateTim: day.UnixMilli(), LogID: id, FromLineNum: 1}) }()
		select {
		case lr := <-done:
			if !lr.IsEnd || lr.LogContent != "readLog fail, logFile not exists" {
				t.Errorf("log %d, a special file: %+v", id, lr)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("log %d, a special file: /log never answered", id)
		}
	}
}

// However long a log, one answer carries a bounded part of it; the admin polls on from the next line.
func TestALongLogIsAnsweredInParts(t *testing.T) {
	dir := t.TempDir()
	logs, err := newRunLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	line := strings.Repeat("x", 1023)
	f, err := logs.create(when, 3)
	if err != nil {
		t.Fatal(err)
	}
	const lines = 3000
	for i := 0; i < lines; i++ {
		if _, err := f.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	logs.close(3, f)
	from, answers, total := 1, 0, 0
	for {
		lr := logs.read(logRequest{LogDateTim: when, LogID: 3, FromLineNum: from})
		answers++
		if len(lr.LogContent) > logChunkMax {
			t.Fatalf("one answer carried %d bytes", len(lr.LogContent))
		}
		total += strings.Count(lr.LogContent, "\n")
		if lr.ToLineNum-lr.FromLineNum+1 != strings.Count(lr.LogContent, "\n") {
			t.Fatalf("lines %d..%d, but %d in the content", lr.FromLineNum, lr.ToLineNum, strings.Count(lr.LogContent, "\n"))
		}
		if lr.IsEnd {
			break
		}
		from = lr.ToLineNum + 1
	}
	if total != lines || answers < 3 {
		t.Errorf("%d lines in %d answers, want %d lines in several", total, answers, lines)
	}
}
