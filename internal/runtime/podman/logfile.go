package podman

import (
	"context"
	"errors"
	"io"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/conmon"
	"github.com/runlet/runlet/internal/runtime/containerlog"
)

// logFileLogs reads the container's k8s-file log from disk, which keeps the
// nanoseconds podman 4.3's API cuts off. It reports false when the file
// cannot be used (another log driver, or runlet cannot see podman's
// storage, e.g. when it runs in a container), so the caller falls back to
// the API.
func (b *Backend) logFileLogs(ctx context.Context, id string, opts runtime.LogOptions, stdout, stderr io.Writer) (bool, error) {
	if b.remote {
		return false, nil
	}
	ic, err := b.client.InspectContainer(ctx, id)
	if err != nil {
		return false, nil
	}
	used, err := conmon.ReadLog(ctx, logFilePath(ic), opts, stdout, stderr, b.isRunning(id))
	return used, wrapf(err, "log file of container %s", shortID(id))
}

// isRunning tells a log follower whether to keep waiting for output. An
// unreachable service counts as running: conmon keeps the container alive.
func (b *Backend) isRunning(id string) containerlog.RunningFunc {
	return func(ctx context.Context) bool {
		ic, err := b.client.InspectContainer(ctx, id)
		if err != nil {
			return !errors.Is(err, runtime.ErrNotFound)
		}
		return ic.State.Running
	}
}
