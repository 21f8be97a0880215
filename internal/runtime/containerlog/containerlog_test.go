package containerlog

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/polltest"
	"github.com/runlet/runlet/internal/runtime"
)

// sample is what conmon writes: nanosecond times with a "+00:00" zone, a
// line split into two partials, and both streams.
const sample = `2026-11-30T11:59:58.094354542+00:00 stdout F hello
2026-11-30T11:59:58.097666043+00:00 stderr F err
2026-11-30T11:59:58.100086651+00:00 stdout P part
2026-11-30T11:59:59.130679125+00:00 stdout F ial
2026-11-30T11:59:59.1309+00:00 stdout F done
`

func writeLog(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ctr.log")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func read(t *testing.T, content string, opts runtime.LogOptions) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if err := Read(context.Background(), writeLog(t, content), opts, &out, &errb, nil); err != nil {
		t.Fatalf("Read(%+v): %v", opts, err)
	}
	return out.String(), errb.String()
}

func TestParseLine(t *testing.T) {
	var m message
	if err := parseLine([]byte("2026-11-30T11:59:58.100086651+00:00 stdout P part\n"), &m); err != nil {
		t.Fatal(err)
	}
	if m.stream != Stdout || string(m.log) != "part" || m.timestamp.Nanosecond() != 100086651 {
		t.Errorf("partial line parsed as %+v", m)
	}
	if err := parseLine([]byte("2026-11-30T11:59:58Z stderr F a b c\n"), &m); err != nil || string(m.log) != "a b c\n" {
		t.Errorf("full line: %v %q", err, m.log)
	}
	for _, bad := range []string{"", "nonsense\n", "2026-11-30T11:59:58Z stdin F x\n", "2026-11-30T11:59:58Z stdout\n", "yesterday stdout F x\n"} {
		if parseLine([]byte(bad), &m) == nil {
			t.Errorf("parseLine(%q) accepted a malformed line", bad)
		}
	}
}

func TestReadAll(t *testing.T) {
	out, errb := read(t, sample, runtime.LogOptions{TailLines: -1})
	if out != "hello\npartial\ndone\n" || errb != "err\n" {
		t.Errorf("stdout %q stderr %q", out, errb)
	}
}

func TestReadTimestampsKeepNanoseconds(t *testing.T) {
	out, _ := read(t, sample, runtime.LogOptions{TailLines: -1, Timestamps: true})
	want := "2026-11-30T11:59:58.094354542Z hello\n" +
		"2026-11-30T11:59:58.100086651Z partial\n" + // one prefix for the joined partials
		"2026-11-30T11:59:59.130900000Z done\n"
	if out != want {
		t.Errorf("timestamps:\n%s\nwant:\n%s", out, want)
	}
}

func TestReadTail(t *testing.T) {
	for _, tc := range []struct {
		tail int64
		want string
	}{{0, ""}, {1, "done\n"}, {2, "ial\ndone\n"}, {3, "partial\ndone\n"}, {100, "hello\npartial\ndone\n"}} {
		if out, _ := read(t, sample, runtime.LogOptions{TailLines: tc.tail}); out != tc.want {
			t.Errorf("tail %d = %q; want %q", tc.tail, out, tc.want)
		}
	}
	// A last line without its newline (a write in progress) counts as a line.
	if out, _ := read(t, strings.TrimSuffix(sample, "\n"), runtime.LogOptions{TailLines: 1}); out != "done" {
		t.Errorf("tail 1 of an unterminated file = %q", out)
	}
}

func TestTailStartAcrossBlocks(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		b.WriteString("2026-11-30T11:59:58Z stdout F line\n")
	}
	content := b.String()
	for _, n := range []int64{1, 150, 1999, 2000, 2001} {
		off, err := tailStart(strings.NewReader(content), int64(len(content)), n)
		if err != nil {
			t.Fatal(err)
		}
		want := min(n, 2000)
		if got := int64(strings.Count(content[off:], "\n")); got != want {
			t.Errorf("tailStart(%d) leaves %d lines; want %d", n, got, want)
		}
	}
}

func TestReadSinceAndLimit(t *testing.T) {
	since := time.Date(2026, 11, 30, 11, 59, 58, 97666043, time.UTC) // the stderr line, to the nanosecond
	out, errb := read(t, sample, runtime.LogOptions{TailLines: -1, Since: since})
	if out != "partial\ndone\n" || errb != "err\n" {
		t.Errorf("since: stdout %q stderr %q", out, errb)
	}
	var both bytes.Buffer
	err := Read(context.Background(), writeLog(t, sample), runtime.LogOptions{TailLines: -1, LimitBytes: 8}, &both, &both, nil)
	if err != nil || both.String() != "hello\ner" {
		t.Errorf("limit 8 = %q, %v; want the first 8 bytes of both streams", both.String(), err)
	}
	// Dropped streams do not count against the limit.
	both.Reset()
	_ = Read(context.Background(), writeLog(t, sample), runtime.LogOptions{TailLines: -1, LimitBytes: 8}, nil, &both, nil)
	if both.String() != "err\n" {
		t.Errorf("stderr only = %q", both.String())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestFollowEndsAfterExit appends while following and checks that the stream
// ends once the container stopped, with what was written before the exit.
func TestFollowEndsAfterExit(t *testing.T) {
	p := writeLog(t, "2026-11-30T11:59:58Z stdout F one\n")
	var alive atomic.Bool
	alive.Store(true)
	var out syncBuf
	done := make(chan error, 1)
	go func() {
		done <- Read(context.Background(), p, runtime.LogOptions{Follow: true, TailLines: -1}, &out, &out,
			func(context.Context) bool { return alive.Load() })
	}()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, _ = f.WriteString("2026-11-30T11:59:59Z stdout F tw") // a write in progress
	time.Sleep(3 * pollInterval)
	_, _ = f.WriteString("o\n")
	polltest.Eventually(t, 5*time.Second, "the output one, two", func() bool { return out.String() == "one\ntwo\n" })
	_, _ = f.WriteString("2026-11-30T12:00:00Z stderr F last\n")
	alive.Store(false)
	select {
	case err := <-done:
		if err != nil || out.String() != "one\ntwo\nlast\n" {
			t.Errorf("follow ended with %v, output %q", err, out.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("following did not end after the container exited")
	}
}

func TestFollowStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Read(ctx, writeLog(t, sample), runtime.LogOptions{Follow: true, TailLines: 0}, nil, nil,
			func(context.Context) bool { return true })
	}()
	time.Sleep(2 * pollInterval)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Read did not return after its context ended")
	}
}

// TestFollowAcrossRotation: a follower keeps going when the log is rotated
// (renamed, then reopened by the runtime), and loses neither what reached
// the old file late nor what the new file holds.
func TestFollowAcrossRotation(t *testing.T) {
	p := writeLog(t, "2026-11-30T11:59:58Z stdout F one\n")
	var alive atomic.Bool
	alive.Store(true)
	var out syncBuf
	done := make(chan error, 1)
	go func() {
		done <- Read(context.Background(), p, runtime.LogOptions{Follow: true, TailLines: -1}, &out, &out,
			func(context.Context) bool { return alive.Load() })
	}()
	polltest.Eventually(t, 5*time.Second, "the output one", func() bool { return out.String() == "one\n" })
	old, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := os.Rename(p, p+".20261130-120000"); err != nil {
		t.Fatal(err)
	}
	_, _ = old.WriteString("2026-11-30T11:59:59Z stdout F two\n") // before the runtime reopened
	time.Sleep(3 * pollInterval)
	if err := os.WriteFile(p, []byte("2026-11-30T12:00:00Z stdout F three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	polltest.Eventually(t, 5*time.Second, "the output one, two, three", func() bool { return out.String() == "one\ntwo\nthree\n" })
	alive.Store(false)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("follow ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("following did not end after the container exited")
	}
}
