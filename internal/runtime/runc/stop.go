package runc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/runlet/runlet/internal/runtime/hostproc"
	"golang.org/x/sys/unix"
)

// killWait is how long a SIGKILLed container may take to be recorded as
// ended.
const killWait = 30 * time.Second

// StopContainer sends the stop signal, then SIGKILL after grace, and
// returns once conmon recorded the end.
func (b *Backend) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	rec, err := b.readContainer(id)
	if err != nil {
		return err
	}
	if b.ended(rec) {
		return nil
	}
	if grace > 0 {
		if err := b.signal(ctx, rec.ID, stopSignal(rec), false); err != nil && !b.ended(rec) {
			return fmt.Errorf("container %s: %w", rec.Config.Name, err)
		}
		if b.waitEnded(ctx, rec, grace) {
			return nil
		}
	}
	// --all: in a PID namespace the pod shares, the container's processes
	// are not the children of an init whose end takes them along.
	if err := b.signal(ctx, rec.ID, unix.SIGKILL, true); err != nil && !b.ended(rec) {
		return fmt.Errorf("container %s: %w", rec.Config.Name, err)
	}
	if !b.waitEnded(ctx, rec, killWait) {
		return fmt.Errorf("container %s: still running %v after SIGKILL", rec.Config.Name, killWait)
	}
	return nil
}

func (b *Backend) signal(ctx context.Context, id string, sig unix.Signal, all bool) error {
	args := []string{"kill"}
	if all {
		args = append(args, "--all")
	}
	_, err := b.runcCmd(ctx, append(args, id, fmt.Sprint(int(sig)))...)
	return err
}

// ended reports that the container is known to have ended: conmon wrote
// its exit, or nothing of it runs any more.
func (b *Backend) ended(rec *containerRecord) bool {
	if _, err := os.Stat(filepath.Join(b.exitDir(), rec.ID)); err == nil {
		return true
	}
	return !rec.Init.Alive() && !rec.Monitor.Alive()
}

func (b *Backend) waitEnded(ctx context.Context, rec *containerRecord, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !b.ended(rec) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// StopSignalLost reports a running container whose init has no handler
// for its stop signal.
func (b *Backend) StopSignalLost(_ context.Context, id string) bool {
	rec, err := b.readContainer(id)
	if err != nil || !rec.Init.Alive() {
		return false
	}
	return hostproc.InitDropsSignal(rec.Init.PID, id, int(stopSignal(rec)))
}

// stopSignal is the image's stop signal, else SIGTERM.
func stopSignal(rec *containerRecord) unix.Signal {
	if n := hostproc.SignalNumber(rec.StopSignal); rec.StopSignal != "" && n > 0 {
		return unix.Signal(n)
	}
	return unix.SIGTERM
}
