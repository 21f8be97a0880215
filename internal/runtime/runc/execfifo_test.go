package runc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/runc/pause"
	"golang.org/x/sys/unix"
)

// fifoBackend is a backend whose runc state holds one created container's
// exec FIFO, with init played by the test.
func fifoBackend(t *testing.T) (*Backend, *containerRecord, string) {
	b := &Backend{opts: Options{Root: t.TempDir()}}
	rec := &containerRecord{ID: "c1"}
	dir := filepath.Join(b.stateDir(), rec.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, execFifo)
	if err := unix.Mkfifo(path, 0o622); err != nil {
		t.Fatal(err)
	}
	return b, rec, path
}

// initProcess is a live process standing in for runc's init.
func initProcess(t *testing.T) (pause.Process, *exec.Cmd) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p, err := pause.Identify(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return p, cmd
}

// A start lets init go: it gets the reader it waits for, its byte is read
// and the FIFO is gone, as runc's state reads a running container.
func TestReleaseLetsInitGo(t *testing.T) {
	b, rec, path := fifoBackend(t)
	rec.Init, _ = initProcess(t)
	wrote := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0) // init's side: blocks until the start
		if err == nil {
			_, err = f.Write([]byte("0"))
			f.Close()
		}
		wrote <- err
	}()
	if err := b.release(context.Background(), rec); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("init's side: %v", err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the exec fifo is still there (%v)", err)
	}
}

// A process that ended before its start never opens the FIFO: the start
// fails within the check's period instead of waiting for ever.
func TestReleaseOfAnEndedProcess(t *testing.T) {
	b, rec, _ := fifoBackend(t)
	var cmd *exec.Cmd
	rec.Init, cmd = initProcess(t)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	done := make(chan error, 1)
	go func() { done <- b.release(context.Background(), rec) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "ended before it was started") {
			t.Fatalf("release: %v; want the process's end named", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("release still waits for a process that ended")
	}
}

// A start cut short leaves no open of the FIFO behind.
func TestReleaseCancelled(t *testing.T) {
	b, rec, _ := fifoBackend(t)
	rec.Init, _ = initProcess(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.release(ctx, rec); err != context.DeadlineExceeded {
		t.Fatalf("release: %v; want the context's end", err)
	}
}
