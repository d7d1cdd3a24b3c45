package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
)

// spoolEntryMax bounds one spooled result as read back: the agent writes a few KiB, anything larger was planted.
const spoolEntryMax = 1 << 20

// spool keeps results not yet accepted by an admin, one file each, written whole (temporary
// file, then rename) on an emptyDir so that an agent restart loses none.
type spool struct {
	// Opened through root, as the run logs: no link planted in the directory leads outside it.
	root   *os.Root
	mu     sync.Mutex
	wake   chan struct{}
	onSize func(int)
}

func newSpool(dir string, onSize func(int)) (*spool, error) {
	root, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	s := &spool{root: root, wake: make(chan struct{}, 1), onSize: onSize}
	s.report()
	return s, nil
}

func (s *spool) add(c callbackRequest) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("%020d.json", c.LogID)
	tmp, err := writeTemp(s.root, name, data)
	if err != nil {
		return err
	}
	if err = s.publish(tmp, name); err != nil {
		_ = s.root.Remove(tmp)
		return err
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// publish renames a written result into place and reports the new count, under mu.
func (s *spool) publish(tmp, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.root.Rename(tmp, name); err != nil {
		return err
	}
	s.report()
	return nil
}

// pending returns the spooled results, oldest log first, with their files.
func (s *spool) pending() ([]callbackRequest, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, _ := fs.ReadDir(s.root.FS(), ".")
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var out []callbackRequest
	var files []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := s.readEntry(e.Name())
		var c callbackRequest
		if err != nil || json.Unmarshal(data, &c) != nil {
			continue
		}
		out = append(out, c)
		files = append(files, e.Name())
	}
	return out, files
}

func (s *spool) readEntry(name string) ([]byte, error) {
	f, err := openRegular(s.root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, spoolEntryMax+1))
	if err == nil && len(data) > spoolEntryMax {
		err = fmt.Errorf("%s is larger than %d bytes", name, spoolEntryMax)
	}
	return data, err
}

func (s *spool) done(files []string) {
	s.mu.Lock()
	for _, f := range files {
		_ = s.root.Remove(f)
	}
	s.report()
	s.mu.Unlock()
}

// report counts the spooled results; callers hold mu, so a count read before a later change is
// never reported after that change's count.
func (s *spool) report() {
	entries, _ := fs.ReadDir(s.root.FS(), ".")
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			n++
		}
	}
	s.onSize(n)
}
