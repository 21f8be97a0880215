package runtimefake

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// Logs implements runtime.Runtime: it writes what SetLogs stored.
func (f *Fake) Logs(_ context.Context, id string, _ runtime.LogOptions, stdout, _ io.Writer) error {
	f.mu.Lock()
	err := f.enter("Logs")
	_, ok := f.containers[id]
	text := f.logs[id]
	f.mu.Unlock()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	_, err = io.WriteString(stdout, text)
	return err
}

// ExecFunc plays a command run in a container: what it writes and its exit code.
type ExecFunc func(ctx context.Context, id string, cmd []string, sio runtime.StreamIO) (int, error)

// HandleExec makes Exec in a known container call fn (nil: Exec is
// unsupported again, the default).
func (f *Fake) HandleExec(fn ExecFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exec = fn
}

// Exec implements runtime.Runtime with the HandleExec function, called
// without the fake's lock held.
func (f *Fake) Exec(ctx context.Context, id string, cmd []string, sio runtime.StreamIO) (int, error) {
	f.mu.Lock()
	if err := f.enter("Exec"); err != nil {
		f.mu.Unlock()
		return -1, err
	}
	fn := f.exec
	_, known := f.containers[id]
	f.mu.Unlock()
	switch {
	case fn == nil:
		return -1, ErrUnsupported
	case !known:
		return -1, fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	if sio.Started != nil {
		sio.Started() // the fake's command starts when fn is called
	}
	return fn(ctx, id, cmd, sio)
}

// Attach implements runtime.Runtime; the fake does not model it.
func (f *Fake) Attach(context.Context, string, runtime.StreamIO) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_ = f.enter("Attach")
	return ErrUnsupported
}

// Stats implements runtime.Runtime: zero figures for each known container.
func (f *Fake) Stats(_ context.Context, ids []string) ([]runtime.ContainerStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("Stats"); err != nil {
		return nil, err
	}
	var out []runtime.ContainerStats
	for _, id := range ids {
		if _, ok := f.containers[id]; ok {
			out = append(out, runtime.ContainerStats{ID: id, Time: time.Now()})
		}
	}
	return out, nil
}

// PortForward implements runtime.Runtime; the fake does not model it.
func (f *Fake) PortForward(context.Context, string, int32, io.ReadWriteCloser) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_ = f.enter("PortForward")
	return ErrUnsupported
}

// ContainerFiles implements runtime.Files: the fake keeps no files (the
// HostFiles capability is off).
func (f *Fake) ContainerFiles(_ context.Context, id string) (runtime.ContainerFiles, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.containers[id]; !ok {
		return runtime.ContainerFiles{}, fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	return runtime.ContainerFiles{}, nil
}

// ReopenContainerLog implements runtime.Files; there is no log to reopen.
func (f *Fake) ReopenContainerLog(context.Context, string) error { return ErrUnsupported }
