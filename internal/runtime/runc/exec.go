package runc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/creack/pty"
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
	"golang.org/x/sys/unix"
)

// Exec runs cmd in the container with `runc exec`, as the container's
// process runs: same user, environment, capabilities and limits.
func (b *Backend) Exec(ctx context.Context, id string, cmd []string, sio runtime.StreamIO) (int, error) {
	rec, err := b.readContainer(id)
	if err != nil {
		return -1, err
	}
	if b.ended(rec) || !rec.Init.Alive() {
		return -1, fmt.Errorf("container %s is not running", rec.Config.Name)
	}
	bundle := b.bundle(id)
	var spec specs.Spec
	if err := readJSON(filepath.Join(bundle, "config.json"), &spec); err != nil {
		return -1, err
	}
	proc := *spec.Process
	proc.Args, proc.Terminal, proc.ConsoleSize = cmd, sio.TTY, nil
	name := "exec-" + newID()[:12]
	procFile, pidFile := filepath.Join(bundle, name+".json"), filepath.Join(bundle, name+".pid")
	defer os.Remove(procFile)
	defer os.Remove(pidFile)
	if err := writeJSON(procFile, &proc); err != nil {
		return -1, err
	}
	args := []string{"--root", b.stateDir(), "exec", "--process", procFile, "--pid-file", pidFile}
	if sio.TTY {
		return b.execTTY(ctx, args, id, pidFile, sio)
	}
	c := b.execCmd(ctx, append(args, id), pidFile)
	c.Stdout, c.Stderr = orDiscard(sio.Stdout), orDiscard(sio.Stderr)
	if sio.Stdin != nil {
		// Not c.Stdin: Wait would wait for a caller's stdin that may never end.
		w, err := c.StdinPipe()
		if err != nil {
			return -1, err
		}
		go func() {
			_, _ = io.Copy(w, sio.Stdin)
			_ = w.Close()
		}()
	}
	if err := c.Start(); err != nil {
		return -1, err
	}
	started(sio)
	return exitCode(c.Wait())
}

// execCmd is `runc exec`; an end of ctx kills the exec'd process, which
// runc then reports.
func (b *Backend) execCmd(ctx context.Context, args []string, pidFile string) *exec.Cmd {
	c := b.runcCommand(ctx, args...)
	c.Cancel = func() error {
		if data, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		return c.Process.Kill()
	}
	return c
}

func started(sio runtime.StreamIO) {
	if sio.Started != nil {
		sio.Started()
	}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func exitCode(err error) (int, error) {
	if err == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return ee.ExitCode(), nil
	}
	return -1, err
}

// execTTY runs the exec with a terminal. runc, in the foreground, gives
// the process a terminal of its own and relays it to runc's, which is a
// terminal made here: its master side carries stdin and output, and a
// resize of it reaches runc as SIGWINCH, which runc passes on.
func (b *Backend) execTTY(ctx context.Context, args []string, id, pidFile string, sio runtime.StreamIO) (int, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return -1, fmt.Errorf("exec with a terminal: %w", err)
	}
	defer master.Close()
	c := b.execCmd(ctx, append(args, id), pidFile)
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	err = c.Start()
	slave.Close()
	if err != nil {
		return -1, err
	}
	started(sio)
	done := make(chan struct{})
	defer close(done)
	if sio.Stdin != nil {
		go func() { _, _ = io.Copy(master, sio.Stdin) }()
	}
	if sio.Resize != nil {
		go runtime.ForwardResize(done, sio.Resize, func(s runtime.TermSize) error {
			return pty.Setsize(master, &pty.Winsize{Rows: s.Height, Cols: s.Width})
		})
	}
	copied := make(chan struct{})
	go func() {
		// EIO once runc, the last holder of the terminal, is gone.
		_, _ = io.Copy(orDiscard(sio.Stdout), master)
		close(copied)
	}()
	code, err := exitCode(c.Wait())
	<-copied
	return code, err
}
