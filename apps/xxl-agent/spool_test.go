package main

import (
	"os"
	"path/filepath"
	"testing"
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
