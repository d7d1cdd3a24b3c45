package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// logChunkMax bounds one /log answer; an admin polls again from the next line, as with a run still writing.
const logChunkMax = 1 << 20

var errNotRegular = errors.New("not a regular file")

// openRegular opens a file the data volume holds for reading only if it is a regular one: a FIFO
// planted there would block the open (hence O_NONBLOCK), and a device such as /dev/zero never ends.
func openRegular(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = errNotRegular
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// writeTemp writes data whole and synced to <name>.tmp in root, for the caller to rename into place.
// Whatever held that name (a crash's leftover, a planted link) goes: the file is always a new one.
func writeTemp(root *os.Root, name string, data []byte) (string, error) {
	tmp := name + ".tmp"
	_ = root.Remove(tmp)
	f, err := root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// runLogs keeps each run's output in <dir>/<yyyy-MM-dd>/<logId>.log (the day of the trigger's
// logDateTime, as xxl-job-core files them) for /log; a run still being written is open in open, and
// an accepted trigger whose run has not started yet is in queued.
type runLogs struct {
	// Every path below the log directory is opened through root: a link planted there (by any
	// container mounting the data volume) must never lead /log or a run to a file outside it (the
	// agent's token). A link that stays inside is followed: whoever plants it can write any log anyway.
	root   *os.Root
	mu     sync.Mutex
	open   map[int64]bool
	queued map[int64]bool
}

func newRunLogs(dir string) (*runLogs, error) {
	root, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	return &runLogs{root: root, open: map[int64]bool{}, queued: map[int64]bool{}}, nil
}

// openDir creates dir and opens it through its parent: dir lies in the data volume, where a link
// planted in its place would otherwise move the whole root out of it.
func openDir(dir string) (*os.Root, error) {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, err
	}
	parent, err := os.OpenRoot(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	if err := parent.MkdirAll(filepath.Base(dir), 0o700); err != nil {
		return nil, err
	}
	return parent.OpenRoot(filepath.Base(dir))
}

// expect records an accepted trigger: until its run starts, /log says it is coming rather than
// that it ended without a log (xxl-job-core answers isEnd there, and an admin stops polling).
func (l *runLogs) expect(logID int64) {
	l.mu.Lock()
	l.queued[logID] = true
	l.mu.Unlock()
}

// forget drops an accepted trigger that will not run (killed or covered in the queue).
func (l *runLogs) forget(logID int64) {
	l.mu.Lock()
	delete(l.queued, logID)
	l.mu.Unlock()
}

func (l *runLogs) path(logDateTime, logID int64) string {
	day := time.UnixMilli(logDateTime).UTC().Format("2006-01-02")
	return filepath.Join(day, fmt.Sprintf("%d.log", logID))
}

func (l *runLogs) create(logDateTime, logID int64) (*os.File, error) {
	p := l.path(logDateTime, logID)
	// Open before the file exists, so /log never sees the run ended while it is being written.
	l.mu.Lock()
	delete(l.queued, logID)
	l.open[logID] = true
	l.mu.Unlock()
	err := l.root.MkdirAll(filepath.Dir(p), 0o700)
	var f *os.File
	if err == nil {
		f, err = l.root.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	if err != nil {
		l.mu.Lock()
		delete(l.open, logID)
		l.mu.Unlock()
		return nil, err
	}
	return f, nil
}

func (l *runLogs) close(logID int64, f *os.File) {
	_ = f.Close()
	l.mu.Lock()
	delete(l.open, logID)
	l.mu.Unlock()
}

// read returns the lines from fromLine (1-based) on; isEnd once the run has finished.
func (l *runLogs) read(r logRequest) logResult {
	from := max(r.FromLineNum, 1)
	f, err := openRegular(l.root, l.path(r.LogDateTim, r.LogID))
	if err != nil {
		l.mu.Lock()
		waiting := l.queued[r.LogID] || l.open[r.LogID]
		l.mu.Unlock()
		if waiting {
			return logResult{FromLineNum: from, ToLineNum: from - 1, IsEnd: false}
		}
		return logResult{FromLineNum: from, LogContent: "readLog fail, logFile not exists", IsEnd: true}
	}
	defer f.Close()
	l.mu.Lock()
	running := l.open[r.LogID]
	l.mu.Unlock()
	var b strings.Builder
	scan := bufio.NewScanner(f)
	scan.Buffer(make([]byte, 64*1024), 4<<20)
	n, full := 0, false
	for scan.Scan() {
		line := n + 1
		if line >= from {
			// At least one line per answer, so polling always moves on.
			if b.Len() > 0 && b.Len()+len(scan.Bytes())+1 > logChunkMax {
				full = true
				break
			}
			b.Write(scan.Bytes())
			b.WriteByte('\n')
		}
		n = line
	}
	return logResult{FromLineNum: from, ToLineNum: n, LogContent: b.String(), IsEnd: !running && !full}
}

// prune removes the days older than keep.
func (l *runLogs) prune(keep time.Duration, now time.Time) {
	days, _ := fs.ReadDir(l.root.FS(), ".")
	for _, d := range days {
		day, err := time.Parse("2006-01-02", d.Name())
		if err == nil && now.Sub(day) > keep+24*time.Hour {
			_ = l.root.RemoveAll(d.Name())
		}
	}
}
