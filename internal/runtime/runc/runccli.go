package runc

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// runcError is runc's complaint about one command.
type runcError struct {
	args   []string
	stderr string
	err    error
}

func (e *runcError) Error() string {
	msg := runcMessage(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("runc %s: %s", e.args[0], msg)
}

func (e *runcError) Unwrap() error { return e.err }

// notExist reports runc's "container does not exist".
func notExist(err error) bool {
	re, ok := err.(*runcError)
	return ok && strings.Contains(re.stderr, "does not exist")
}

// runcCommand is a runc process, named runc in a process list whatever
// path runs it (the sealed copy's says nothing there).
func (b *Backend) runcCommand(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, b.runc, args...)
	cmd.Args[0] = "runc"
	return cmd
}

// runcName names the runc binary in messages: the host's path, also when
// it runs from the sealed copy.
func (b *Backend) runcName() string {
	if b.runcCopy != nil {
		return b.runcCopy.Name() + " (run from a sealed copy)"
	}
	return b.runc
}

// runcCmd runs one runc command on the backend's state.
func (b *Backend) runcCmd(ctx context.Context, args ...string) ([]byte, error) {
	return b.runcInput(ctx, nil, args...)
}

func (b *Backend) runcInput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := b.runcCommand(ctx, append([]string{"--root", b.stateDir()}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return nil, &runcError{args: args, stderr: stderr.String(), err: err}
	}
	return stdout.Bytes(), nil
}
