package conmon

import (
	"context"
	"io"
	"os"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/containerlog"
)

// ReadLog copies a slice of the k8s-file log conmon writes at path (see
// package containerlog). It reports false, having read nothing, when there
// is no file to read (no path, or the runtime's storage is not visible,
// e.g. when runlet runs in a container), so that the caller can ask its
// runtime instead. An end of ctx is no error.
func ReadLog(ctx context.Context, path string, opts runtime.LogOptions, stdout, stderr io.Writer, running containerlog.RunningFunc) (bool, error) {
	if path == "" {
		return false, nil
	}
	if _, err := os.Stat(path); err != nil {
		return false, nil
	}
	err := containerlog.Read(ctx, path, opts, stdout, stderr, running)
	if ctx.Err() != nil {
		return true, nil
	}
	return true, err
}
