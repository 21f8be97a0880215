package cgroups

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// StartIn starts newCmd's command as a process made in the cgroups dirs,
// so that its image is charged to them from its exec on: v1 cgroups,
// and at most one v2 cgroup (a hybrid host's unified hierarchy). Into a v2
// cgroup the kernel clones it (CLONE_INTO_CGROUP). v1 cgroups hold
// threads: a thread of runlet's own joins them and forks it; Go ends that
// thread afterwards, as it ends every thread left locked, and makes new
// threads from another one meanwhile.
func StartIn(newCmd func() *exec.Cmd, dirs []string) (*exec.Cmd, error) {
	var v1 []string
	v2 := ""
	for _, d := range dirs {
		if cgroup2(d) {
			v2 = d
		} else {
			v1 = append(v1, d)
		}
	}
	if len(v1) == 0 {
		return startInV2(newCmd, v2)
	}
	done := make(chan forked, 1)
	go forkInCgroups(func() (*exec.Cmd, error) { return startInV2(newCmd, v2) }, v1, done)
	r := <-done
	threadGone(r.tid)
	return r.cmd, r.err
}

// forked is the start of a process from a thread of runlet's own.
type forked struct {
	tid int
	cmd *exec.Cmd
	err error
}

// forkInCgroups moves its thread into the cgroups dirs and starts a
// process there. The thread stays locked, so Go ends it with the
// goroutine; but not the main thread, which Go cannot end: there a
// goroutine started while the main thread stays locked does the fork, on
// another thread.
func forkInCgroups(start func() (*exec.Cmd, error), dirs []string, done chan<- forked) {
	goruntime.LockOSThread()
	tid := unix.Gettid()
	if tid == unix.Getpid() {
		other := make(chan forked, 1)
		go forkInCgroups(start, dirs, other)
		r := <-other
		goruntime.UnlockOSThread()
		done <- r
		return
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "tasks"), []byte(strconv.Itoa(tid)), 0o644); err != nil {
			done <- forked{tid: tid, err: fmt.Errorf("joining the cgroup %s: %w", d, err)}
			return
		}
	}
	cmd, err := start()
	done <- forked{tid, cmd, err}
}

// threadGone waits, briefly, until runlet's thread tid has ended: none of
// runlet's threads stays in a pod's cgroup.
func threadGone(tid int) {
	task := "/proc/self/task/" + strconv.Itoa(tid)
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Microsecond) {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			return
		}
	}
}

// startInV2 starts the process cloned into the v2 cgroup dir (none: where
// it is); a kernel older than CLONE_INTO_CGROUP (5.7) gets it moved there
// right after its start.
func startInV2(newCmd func() *exec.Cmd, dir string) (*exec.Cmd, error) {
	cmd := newCmd()
	if dir == "" {
		return cmd, cmd.Start()
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return cmd, fmt.Errorf("opening the cgroup %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	err = cmd.Start()
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.E2BIG) {
		return cmd, err
	}
	cmd = newCmd()
	if err := cmd.Start(); err != nil {
		return cmd, err
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return cmd, fmt.Errorf("joining the cgroup %s: %w", dir, err)
	}
	return cmd, nil
}

func cgroup2(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}
