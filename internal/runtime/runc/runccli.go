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

// runcCmd runs one runc command on the backend's state.
func (b *Backend) runcCmd(ctx context.Context, args ...string) ([]byte, error) {
	return b.runcInput(ctx, nil, args...)
}

func (b *Backend) runcInput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, b.runc, append([]string{"--root", b.stateDir()}, args...)...)
	cmd.Args[0] = "runc" // the sealed copy's path says nothing in a process list
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
