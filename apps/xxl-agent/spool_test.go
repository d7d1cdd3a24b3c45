package main

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Links planted in the spool (another container of the pod mounting the agent's data volume could)
// neither send a file from outside it to the admin nor make a result overwrite one.
func TestTheSpoolNeverFollowsALinkOutOfItsDirectory(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	foreign := filepath.Join(outside, "result.json")
	const content = `{"logId":99,"logDateTim":1,"handleCode":200,"handleMsg":"SECRET"}`
	if err := os.WriteFile(foreign, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := newSpool(dir, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(foreign, filepath.Join(dir, "00000000000000000099.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(foreign, filepath.Join(dir, "00000000000000000007.json.tmp")); err != nil {
		t.Fatal(err)
	}
	if err := s.add(callbackRequest{LogID: 7, LogDateTim: 1, HandleCode: 200, HandleMsg: "ok"}); err != nil {
		t.Fatalf("a planted link kept a result from being spooled: %v", err)
	}
	results, _ := s.pending()
	if len(results) != 1 || results[0].LogID != 7 || results[0].HandleMsg != "ok" {
		t.Errorf("the spool holds %+v, want only the result of log 7", results)
	}
	if b, _ := os.ReadFile(foreign); string(b) != content {
		t.Errorf("a result written through a planted link: %q", b)
	}
}

// The spool directory itself lies in the data volume: one planted as a link out of it is refused,
// rather than sending that directory's JSON files to the admin and then deleting them.
func TestASpoolDirectoryLinkedOutOfTheVolumeIsRefused(t *testing.T) {
	data, outside := t.TempDir(), t.TempDir()
	foreign := filepath.Join(outside, "00000000000000000099.json")
	if err := os.WriteFile(foreign, []byte(`{"logId":99,"handleMsg":"SECRET"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(data, "callbacks")); err != nil {
		t.Fatal(err)
	}
	s, err := newSpool(filepath.Join(data, "callbacks"), func(int) {})
	if err == nil {
		results, _ := s.pending()
		t.Errorf("the spool opened through a planted link: it holds %+v", results)
	}
}

// A FIFO or an oversized file planted as a spooled result neither stops the replay nor fills memory.
func TestTheSpoolSkipsSpecialAndOversizedEntries(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "00000000000000000001.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, spoolEntryMax+10)
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000002.json"), big, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := newSpool(dir, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.add(callbackRequest{LogID: 3}); err != nil {
		t.Fatal(err)
	}
	done := make(chan []callbackRequest, 1)
	go func() { results, _ := s.pending(); done <- results }()
	select {
	case results := <-done:
		if len(results) != 1 || results[0].LogID != 3 {
			t.Errorf("pending: %+v, want the one real result", results)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("pending never returned: it opened the FIFO")
	}
}

// Results of concurrent runs spooled at once: the count last reported is the count in the spool,
// never one read before another result arrived (the agent's metric would stay stale until the
// next change).
func TestTheLastReportedCountIsTheSpoolsCountUnderConcurrentResults(t *testing.T) {
	for round := 0; round < 20; round++ {
		var mu sync.Mutex
		last := -1
		s, err := newSpool(t.TempDir(), func(n int) { mu.Lock(); last = n; mu.Unlock() })
		if err != nil {
			t.Fatal(err)
		}
		const runs = 16
		var wg sync.WaitGroup
		for i := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.add(callbackRequest{LogID: int64(round*runs + i), HandleCode: 200}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if last != runs {
			t.Fatalf("round %d: %d results spooled, %d reported last", round, runs, last)
		}
	}
}
