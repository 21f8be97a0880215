package pause

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// startIn starts newCmd's command as a process made in the cgroups dirs,
// so that its image is charged to them from its exec on. On cgroup v2 the
// kernel clones it there (CLONE_INTO_CGROUP). On v1, where cgroups hold threads,
// a thread of runlet's own joins them and forks it; Go ends that thread
// afterwards, as it ends every thread left locked, and makes new threads
// from another one meanwhile.
func startIn(newCmd func() *exec.Cmd, dirs []string) (*exec.Cmd, error) {
	cmd := newCmd()
	if len(dirs) == 0 {
		return cmd, cmd.Start()
	}
	if cgroup2(dirs[0]) {
		return startInV2(cmd, newCmd, dirs[0])
	}
	done := make(chan forked, 1)
	go forkInCgroups(cmd, dirs, done)
	r := <-done
	threadGone(r.tid)
	return cmd, r.err
}

// forked is the start of a process from a thread of runlet's own.
type forked struct {
	tid int
	err error
}

// forkInCgroups moves its thread into the cgroups dirs and starts cmd
// there. The thread stays locked, so Go ends it with the goroutine; but
// not the main thread, which Go cannot end: there a goroutine started
// while the main thread stays locked does the fork, on another thread.
func forkInCgroups(cmd *exec.Cmd, dirs []string, done chan<- forked) {
	goruntime.LockOSThread()
	tid := unix.Gettid()
	if tid == unix.Getpid() {
		other := make(chan forked, 1)
		go forkInCgroups(cmd, dirs, other)
		r := <-other
		goruntime.UnlockOSThread()
		done <- r
		return
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "tasks"), []byte(strconv.Itoa(tid)), 0o644); err != nil {
			done <- forked{tid, fmt.Errorf("joining the pod's cgroup: %w", err)}
			return
		}
	}
	done <- forked{tid, cmd.Start()}
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

// startInV2 clones the process into the cgroup dir; a kernel older than
// CLONE_INTO_CGROUP (5.7) gets it moved there right after its start.
func startInV2(cmd *exec.Cmd, newCmd func() *exec.Cmd, dir string) (*exec.Cmd, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return cmd, fmt.Errorf("opening the pod's cgroup: %w", err)
	}
	defer unix.Close(fd)
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
		return cmd, fmt.Errorf("joining the pod's cgroup: %w", err)
	}
	return cmd, nil
}

func cgroup2(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}
