// Package childproc starts child processes that must not outlive their
// parent: runlet's podman service, and the processes a test starts.
//
// The kernel sends a child its parent-death signal (Pdeathsig) when the
// thread that forked it ends, not the process. Go ends a thread whenever a
// goroutine exits while locked to it (a namespace switch that could not be
// undone, a supervisor like this one), and that thread may have forked some
// other goroutine's child earlier: the child dies with nobody asking. Start
// forks from a thread locked for the child's whole life, so the only thread
// its signal is tied to is one nothing else uses until the child is gone.
package childproc

import (
	"os/exec"
	"runtime"
	"syscall"
)

// Start starts cmd with sig as its parent-death signal and waits for it in
// the background: the returned channel is closed once cmd has exited and
// cmd.ProcessState is set. The caller must not call cmd.Wait.
func Start(cmd *exec.Cmd, sig syscall.Signal) (<-chan struct{}, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		// The child is gone after Wait: the thread may serve others again.
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err != nil {
			return
		}
		_ = cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}
