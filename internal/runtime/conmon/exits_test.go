package conmon

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFlagValue(t *testing.T) {
	argv := bytes.Split([]byte("conmon\x00--api-version\x001\x00--exit-dir\x00/run/libpod/exits\x00--log-level=debug\x00"), []byte{0})
	for name, want := range map[string]string{"--exit-dir": "/run/libpod/exits", "--log-level": "debug", "--missing": ""} {
		if got := flagValue(argv, name); got != want {
			t.Errorf("flagValue(%s) = %q; want %q", name, got, want)
		}
	}
}

// TestWatchExits: conmon writes <id>.XXXX, then renames it to <id>; only a
// container ID's name is reported, and Close ends Run.
func TestWatchExits(t *testing.T) {
	dir := t.TempDir()
	w, err := WatchExits(dir)
	if err != nil {
		t.Fatal(err)
	}
	type exit struct{ id, path string }
	got := make(chan exit, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(context.Background(), func(id, path string) bool {
			got <- exit{id, path}
			return true
		})
	}()
	id := strings.Repeat("ab", 32)
	tmp := filepath.Join(dir, id+".L0I5Y3")
	for _, f := range []string{filepath.Join(dir, "stray"), tmp} {
		if err := os.WriteFile(f, []byte("137"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(tmp, filepath.Join(dir, id)); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-got:
		if e.id != id || e.path != filepath.Join(dir, id) {
			t.Errorf("exit %+v; want container %s at its exit file", e, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit reported for the exit file")
	}
	select {
	case e := <-got:
		t.Errorf("unexpected exit %+v", e)
	case <-time.After(100 * time.Millisecond):
	}
	_ = w.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after Close")
	}
}

func TestWatchExitsWithoutDirectory(t *testing.T) {
	if w, err := WatchExits(filepath.Join(t.TempDir(), "absent")); err == nil {
		_ = w.Close()
		t.Error("watching a missing directory claimed success")
	}
}

// TestReadExit: the code inside, the time from the file's ctime; a file
// not there or not written yet is no exit.
func TestReadExit(t *testing.T) {
	path := filepath.Join(t.TempDir(), strings.Repeat("ab", 32))
	if _, err := ReadExit(path); err == nil {
		t.Error("a missing exit file read as an exit")
	}
	for body, want := range map[string]int{"3\n": 3, "137": 137, "": -1} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := ReadExit(path)
		switch {
		case want < 0 && err == nil:
			t.Errorf("exit file %q read as %+v; want an error", body, e)
		case want >= 0 && (err != nil || e.Code != want || time.Since(e.FinishedAt) > time.Minute):
			t.Errorf("exit file %q = %+v, %v; want code %d, finished just now", body, e, err, want)
		}
	}
}
