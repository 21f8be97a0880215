package logs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/runtime"
)

// fakeRuntime writes logs as conmon does: to the path, reopened on request.
type fakeRuntime struct {
	path      string
	reopenErr error
	reopened  int
}

func (f *fakeRuntime) ContainerFiles(context.Context, string) (runtime.ContainerFiles, error) {
	return runtime.ContainerFiles{LogPath: f.path}, nil
}

func (f *fakeRuntime) ReopenContainerLog(context.Context, string) error {
	if f.reopenErr != nil {
		return f.reopenErr
	}
	f.reopened++
	return os.WriteFile(f.path, nil, 0o640)
}

func newManager(t *testing.T, rt *fakeRuntime, maxFiles int) *Manager {
	log := logtest.Discard()
	m, err := New(Config{Backend: rt, Running: func() []string { return []string{"c1"} }, MaxSize: 10, MaxFiles: maxFiles, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	m.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	return m
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func TestRotateKeepsMaxFiles(t *testing.T) {
	dir := t.TempDir()
	rt := &fakeRuntime{path: filepath.Join(dir, "ctr.log")}
	m := newManager(t, rt, 3)
	for i := 0; i < 5; i++ {
		if err := os.WriteFile(rt.path, []byte(fmt.Sprintf("entry %02d long enough\n", i)), 0o640); err != nil {
			t.Fatal(err)
		}
		m.RotateAll(context.Background())
	}
	got := files(t, dir)
	want := []string{"ctr.log", "ctr.log.20261201-100004.gz", "ctr.log.20261201-100005"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("files %v; want %v", got, want)
	}
	if rt.reopened != 5 {
		t.Errorf("reopened %d times; want 5", rt.reopened)
	}
	// Under the size nothing happens.
	m.RotateAll(context.Background())
	if rt.reopened != 5 {
		t.Error("rotated a log under its maximum size")
	}
}

func TestRotateFailedReopenRestoresName(t *testing.T) {
	dir := t.TempDir()
	rt := &fakeRuntime{path: filepath.Join(dir, "ctr.log"), reopenErr: errors.New("conmon gone")}
	m := newManager(t, rt, 5)
	if err := os.WriteFile(rt.path, []byte("more than ten bytes\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	m.RotateAll(context.Background())
	if got := files(t, dir); len(got) != 1 || got[0] != "ctr.log" {
		t.Errorf("files %v; want the log under its own name only", got)
	}
}

func TestNewRejectsBadLimits(t *testing.T) {
	if _, err := New(Config{MaxSize: 10, MaxFiles: 1}); err == nil {
		t.Error("MaxFiles 1 accepted")
	}
	if _, err := New(Config{MaxSize: 0, MaxFiles: 5}); err == nil {
		t.Error("MaxSize 0 accepted")
	}
}
