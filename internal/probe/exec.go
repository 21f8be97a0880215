package probe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// maxExecOutput is how much of an exec check's output is kept, as the
// kubelet's exec prober keeps.
const maxExecOutput = 10 * 1 << 10 // 10KB

// Execer runs a command in a container; runtime.Runtime is one.
type Execer interface {
	Exec(ctx context.Context, id string, cmd []string, sio runtime.StreamIO) (int, error)
}

// ErrCommandTimedOut is an exec that outlived its timeout (the CRI's wording).
var ErrCommandTimedOut = errors.New("command timed out")

// ExitError is a command that ran and exited non-zero.
type ExitError struct {
	Cmd  []string
	Code int
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("command '%s' exited with %d", strings.Join(e.Cmd, " "), e.Code)
}

// execSetupAllowance is how long the runtime may take on top of a timed
// command to set up and tear down the exec session, as the kubelet's CRI
// client adds its runtime request timeout (2 min) to ExecSync's timeout.
const execSetupAllowance = 2 * time.Minute

// errTimedOut is the cause of a context cancelled by a command's timeout.
var errTimedOut = errors.New("exec timeout")

// RunInContainer runs cmd in the container and returns its combined output
// (at most 10 KiB). A timeout of 0 leaves only ctx to bound it. The timeout
// counts from the moment the command runs (the runtime's Started call), as
// the CRI runtimes count ExecSync's: a busy podman setting up the session
// is not the command being slow. A non-zero exit is an *ExitError; a
// timeout wraps ErrCommandTimedOut.
func RunInContainer(ctx context.Context, rt Execer, containerID string, cmd []string, timeout time.Duration) ([]byte, error) {
	sio := runtime.StreamIO{}
	if timeout > 0 {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		expire := func() { cancel(errTimedOut) }
		overall := time.AfterFunc(timeout+execSetupAllowance, expire)
		defer overall.Stop()
		var mu sync.Mutex
		var cmdTimer *time.Timer
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			if cmdTimer != nil {
				cmdTimer.Stop()
			}
		}()
		sio.Started = func() {
			mu.Lock()
			defer mu.Unlock()
			if cmdTimer == nil {
				cmdTimer = time.AfterFunc(timeout, expire)
			}
		}
	}
	out := &limitedBuffer{max: maxExecOutput}
	sio.Stdout, sio.Stderr = out, out
	code, err := rt.Exec(ctx, containerID, cmd, sio)
	switch {
	case timeout > 0 && errors.Is(context.Cause(ctx), errTimedOut):
		// The command may live on in the container: podman cannot stop an
		// exec session, as the kubelet's runtimes mostly cannot either.
		return out.Bytes(), fmt.Errorf("%w: %q timed out after %s", ErrCommandTimedOut, strings.Join(cmd, " "), timeout)
	case err != nil:
		return out.Bytes(), err
	case code != 0:
		return out.Bytes(), &ExitError{Cmd: cmd, Code: code}
	}
	return out.Bytes(), nil
}

// Exec is the exec check: exit 0 is Success, another exit code or a timeout
// Failure, and an exec that could not run Unknown with its error.
func Exec(ctx context.Context, rt Execer, containerID string, cmd []string, timeout time.Duration) (Result, string, error) {
	out, err := RunInContainer(ctx, rt, containerID, cmd, timeout)
	var exit *ExitError
	switch {
	case err == nil:
		return Success, string(out), nil
	case errors.As(err, &exit):
		return Failure, string(out), nil
	case errors.Is(err, ErrCommandTimedOut):
		return Failure, err.Error(), nil
	}
	return Unknown, "", err
}

// limitedBuffer keeps the first max bytes written and drops the rest, as the
// kubelet's LimitWriter; it never fails a write, so the command's output
// stream is drained to its end. Stdout and stderr share it from two copiers.
type limitedBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Bytes returns what was kept.
func (b *limitedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...)
}
