package runc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// execFifo is the FIFO in runc's state of a created container that runc's
// init waits on before it executes the container's process.
const execFifo = "exec.fifo"

// release lets a created container's process run, as `runc start` does
// (libcontainer's exec): it opens the exec FIFO, reads the byte init
// writes once it is let go, and removes the FIFO, which runc's state then
// reads as running. Done here, a start costs no runc process, a fifth of a
// runc pod's start on a slow host. Without the FIFO (another runtime's
// state), `runc start` does it.
func (b *Backend) release(ctx context.Context, rec *containerRecord) error {
	path := filepath.Join(b.stateDir(), rec.ID, execFifo)
	if _, err := os.Lstat(path); err != nil {
		_, err := b.runcCmd(ctx, "start", rec.ID)
		return err
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_RDONLY, 0) // blocks until init opens its end
		done <- opened{f, err}
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case o := <-done:
			return readExecFifo(path, o.f, o.err)
		case <-tick.C:
			if rec.Init.Alive() {
				continue
			}
			// The process ended: its byte is there or never comes.
			o := unblock(path, done)
			return readExecFifo(path, o.f, o.err)
		case <-ctx.Done():
			if o := unblock(path, done); o.f != nil {
				o.f.Close()
			}
			return ctx.Err()
		}
	}
}

// opened is the open of the exec FIFO.
type opened struct {
	f   *os.File
	err error
}

// unblock ends the wait of the open in release, which holds a reader's
// place in the FIFO, with a writer of its own that writes nothing.
func unblock(path string, done <-chan opened) opened {
	if fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
		unix.Close(fd)
	}
	return <-done
}

// readExecFifo reads what init wrote, until it executed the process (the
// FIFO is close-on-exec), and removes the FIFO.
func readExecFifo(path string, f *os.File, err error) error {
	if err != nil {
		return fmt.Errorf("the container's exec fifo: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("the container's exec fifo: %w", err)
	}
	if len(data) == 0 {
		return errors.New("the container's process ended before it was started")
	}
	return os.Remove(path)
}
