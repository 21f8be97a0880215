// Package pause runs the process that holds a runc pod's namespaces: the
// kubelet's pause container, as a process of runlet's own binary. It runs
// in new IPC, UTS and PID namespaces (and a network namespace of its own
// when the core gave the pod none), names the UTS namespace after the pod,
// reaps the orphans of a pod that shares its PID namespace, and waits. It
// outlives runlet, in a session and cgroups not runlet's, so that a
// restart of runlet restarts nothing.
//
// The program is runlet-pause (cmd/runlet-pause), else runlet's own binary
// re-executed with argv[0] set to pauseproc.Arg0; package pauseproc takes
// over such a process before main runs, in runlet and in any test binary
// that imports this package, as containerd's and moby's reexec do.
package pause

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/runc/pause/pauseproc"
	"golang.org/x/sys/unix"
)

// readyTimeout bounds the pause process's start, which on a loaded host
// is the start of a Go binary.
const readyTimeout = 10 * time.Second

// Namespaces says which namespaces the pause process makes; the others are
// the host's (runlet's).
type Namespaces struct {
	Net, IPC, UTS, PID bool
}

// Config is what a pause process starts with.
type Config struct {
	Namespaces
	// Hostname names a new UTS namespace.
	Hostname string
	// Cgroups are the directories of the cgroups the process is made in:
	// the pod's, so that all of its memory is charged to the pod, as the
	// kubelet's pause container's is (a pod whose limits cannot hold it
	// fails to get a sandbox), and runlet's helpers' in the hierarchies
	// without the pod's limits.
	Cgroups []string
	// UserNS, when set, is the pod's own user namespace, made with the
	// process: it then owns the process's other new namespaces, which the
	// pod's containers can only join from inside it. The process is the
	// namespace's root.
	UserNS *runtime.UserNamespace
	// Binary is the program it runs; nil is runlet's own.
	Binary *Binary
}

// Start starts a pause process as cfg says and returns its PID and start
// time (Identity).
func Start(cfg Config) (Process, error) {
	ready, w, err := os.Pipe()
	if err != nil {
		return Process{}, err
	}
	defer ready.Close()
	cmd, err := cgroups.StartIn(func() *exec.Cmd { return command(cfg, w) }, cfg.Cgroups)
	w.Close()
	if err != nil {
		// A fork the pod's memory cgroup cannot hold fails with ENOMEM, or
		// ENFILE where the kernel cannot charge the new task's files.
		if len(cfg.Cgroups) > 0 && (errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.ENFILE)) {
			return Process{}, fmt.Errorf("%w (%v)", tooLittleMemory(cfg), err)
		}
		return Process{}, fmt.Errorf("starting the pause process: %w", err)
	}
	// Reaped here while runlet lives; after a restart, by init.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	p := Process{PID: cmd.Process.Pid}
	// It writes a byte once the pod is named: a container that joins its
	// UTS namespace sees the pod's name. A failure writes why instead.
	_ = ready.SetReadDeadline(time.Now().Add(readyTimeout))
	answer, _ := io.ReadAll(io.LimitReader(ready, 512))
	if len(answer) == 1 && answer[0] == 1 {
		if p.StartTime, err = startTime(p.PID); err == nil {
			return p, nil
		}
	}
	_ = cmd.Process.Kill()
	return Process{}, startError(cfg, string(answer), exited)
}

// command is the pause process's command, which tells it through ready
// that the pod is named.
func command(cfg Config, ready *os.File) *exec.Cmd {
	ns := cfg.Namespaces
	// One P: fewer threads for the pod's process count.
	env := []string{pauseproc.EnvHostname + "=" + cfg.Hostname, "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "GOMAXPROCS=1"}
	if ns.Net {
		env = append(env, pauseproc.EnvLoopback+"=1")
	}
	cmd := cfg.Binary.command(env, ready)
	cmd.Dir = "/"
	var flags uintptr
	for _, f := range []struct {
		on   bool
		flag uintptr
	}{{ns.Net, unix.CLONE_NEWNET}, {ns.IPC, unix.CLONE_NEWIPC}, {ns.UTS, unix.CLONE_NEWUTS}, {ns.PID, unix.CLONE_NEWPID}} {
		if f.on {
			flags |= f.flag
		}
	}
	// A session of its own and no parent-death signal: it holds the pod's
	// namespaces across restarts of runlet.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Cloneflags: flags}
	if u := cfg.UserNS; u != nil {
		a := cmd.SysProcAttr
		a.Cloneflags |= unix.CLONE_NEWUSER
		a.UidMappings, a.GidMappings = procIDMaps(u.UIDs), procIDMaps(u.GIDs)
		a.GidMappingsEnableSetgroups = true
		// Root of the namespace: capabilities survive its exec.
		a.Credential = &syscall.Credential{Uid: 0, Gid: 0}
	}
	return cmd
}

func procIDMaps(m []runtime.IDMapping) []syscall.SysProcIDMap {
	out := make([]syscall.SysProcIDMap, 0, len(m))
	for _, e := range m {
		out = append(out, syscall.SysProcIDMap{ContainerID: int(e.ContainerID), HostID: int(e.HostID), Size: int(e.Length)})
	}
	return out
}

// startError says why a pause process did not come up.
func startError(cfg Config, answer string, exited <-chan error) error {
	if len(answer) > 1 {
		return errors.New("the pause process: " + answer)
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(time.Second):
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(cfg.Cgroups) > 0 {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return tooLittleMemory(cfg)
		}
	}
	return fmt.Errorf("the pause process did not set up the pod's namespaces (hostname %q or loopback refused, or no answer within %v): %v", cfg.Hostname, readyTimeout, err)
}

func tooLittleMemory(cfg Config) error {
	return fmt.Errorf("the pause process could not run in the pod's cgroup %s: its memory limit is too low for the sandbox", cfg.Cgroups[len(cfg.Cgroups)-1])
}

// Process is a process known by PID and start time, so that a PID reused
// after it ended is not taken for it: a pause process, or a container's
// process or monitor.
type Process struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
}

// Alive reports whether the process still runs.
func (p Process) Alive() bool {
	if p.PID <= 0 {
		return false
	}
	st, err := startTime(p.PID)
	return err == nil && st == p.StartTime && !zombie(p.PID)
}

// Identify returns the process now running as pid.
func Identify(pid int) (Process, error) {
	st, err := startTime(pid)
	if err != nil {
		return Process{}, err
	}
	return Process{PID: pid, StartTime: st}, nil
}

// NS is the path of one of its namespaces ("net", "ipc", "uts", "pid").
func (p Process) NS(typ string) string { return fmt.Sprintf("/proc/%d/ns/%s", p.PID, typ) }

// Kill ends the process and waits up to timeout for it to be gone.
func (p Process) Kill(timeout time.Duration) error {
	if !p.Alive() {
		return nil
	}
	if err := unix.Kill(p.PID, unix.SIGKILL); err != nil && err != unix.ESRCH {
		return fmt.Errorf("killing the pause process %d: %w", p.PID, err)
	}
	deadline := time.Now().Add(timeout)
	for p.Alive() {
		if time.Now().After(deadline) {
			return fmt.Errorf("the pause process %d outlived SIGKILL for %v", p.PID, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// startTime is field 22 of /proc/<pid>/stat, in clock ticks since boot.
func startTime(pid int) (uint64, error) {
	fields, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

func zombie(pid int) bool {
	fields, err := statFields(pid)
	return err != nil || fields[0] == "Z"
}

// statFields are the fields of /proc/<pid>/stat after the command name,
// starting with the state (field 3).
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return f, nil
}
