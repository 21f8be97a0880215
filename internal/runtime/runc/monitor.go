package runc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/runlet/runlet/internal/runtime/cgroups"
	"golang.org/x/sys/unix"
)

// createTimeout bounds conmon's `runc create`, as podman's
// ContainerCreateTimeout does.
const createTimeout = 4 * time.Minute

// startMonitor runs conmon for rec's container as podman does: conmon
// forks itself away, runs `runc create`, and tells over the sync pipe the
// container's PID or runc's error.
func (b *Backend) startMonitor(ctx context.Context, rec *containerRecord) error {
	bundle := b.bundle(rec.ID)
	parent, child, err := socketPair()
	if err != nil {
		return err
	}
	defer parent.Close()
	// A file, not a pipe: conmon's daemon keeps it, and Wait would wait
	// for the container's end.
	errPath := filepath.Join(bundle, "conmon.err")
	errf, err := os.Create(errPath)
	if err != nil {
		child.Close()
		return err
	}
	args := b.conmonArgs(rec)
	newCmd := func() *exec.Cmd {
		cmd := exec.Command(b.conmon, args...)
		cmd.Dir = bundle // conmon leaves files in its working directory
		cmd.Env = []string{"_OCI_SYNCPIPE=3", "PATH=" + os.Getenv("PATH")}
		cmd.ExtraFiles = []*os.File{child}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Stdout, cmd.Stderr = errf, errf
		return cmd
	}
	err = runHelper(newCmd)
	errf.Close()
	child.Close()
	if err != nil {
		out, _ := os.ReadFile(errPath)
		return fmt.Errorf("conmon: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return readSync(ctx, parent)
}

// runHelper runs a command among runlet's helpers: conmon, made there,
// outlives the end of runlet's own cgroup, and the container with it.
func runHelper(newCmd func() *exec.Cmd) error {
	dirs, err := cgroups.HelperDirs(cgroups.Root, nil)
	if err != nil {
		return err
	}
	cmd, err := cgroups.StartIn(newCmd, dirs)
	if err != nil {
		return err
	}
	return cmd.Wait()
}

func (b *Backend) conmonArgs(rec *containerRecord) []string {
	bundle := b.bundle(rec.ID)
	args := []string{
		"--api-version", "1", "-c", rec.ID, "-u", rec.ID, "-r", b.runc, "-b", bundle,
		"-p", filepath.Join(bundle, "pidfile"), "-n", rec.Config.Name, "--exit-dir", b.exitDir(),
		"--full-attach", "--socket-dir-path", bundle, "-l", "k8s-file:" + logPath(bundle), "--log-level", "error",
		"--conmon-pidfile", filepath.Join(bundle, "conmon.pid"),
		"--runtime-arg", "--root", "--runtime-arg", b.stateDir(),
	}
	switch {
	case rec.Config.TTY:
		args = append(args, "-t")
	case rec.Config.Stdin:
		args = append(args, "-i")
	}
	return args
}

func socketPair() (parent, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_LOCAL, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[1]), "sync-parent"), os.NewFile(uintptr(fds[0]), "sync-child"), nil
}

// readSync reads conmon's answer: {"data": pid} or {"data": -1, "message": why}.
func readSync(ctx context.Context, pipe *os.File) error {
	deadline := time.Now().Add(createTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = pipe.SetReadDeadline(deadline)
	line, err := bufio.NewReader(pipe).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return errors.New("runc create did not finish in time")
		}
		return fmt.Errorf("conmon said nothing of runc create: %w", err)
	}
	var si struct {
		Data    int    `json:"data"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(line, &si); err != nil {
		return fmt.Errorf("conmon's answer %q: %w", line, err)
	}
	if si.Data < 0 {
		return fmt.Errorf("runc create: %s", runcMessage(si.Message))
	}
	return nil
}

// runcMessage takes runc's reason out of its log line(s).
func runcMessage(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.LastIndex(msg, "msg=\""); i >= 0 {
		return strings.TrimSuffix(strings.TrimSpace(msg[i+5:]), "\"")
	}
	return msg
}

func logPath(bundle string) string { return filepath.Join(bundle, "ctr.log") }
