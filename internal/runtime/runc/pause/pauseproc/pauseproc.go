// Package pauseproc is the pause process itself: the code that takes over
// runlet's binary, before main, when it runs as a pod's pause process
// (package pause starts it).
//
// It imports only the standard library, x/sys and netns/loopback. Go
// initialises the packages of a binary by import path among those whose
// imports are ready, so this one runs about 2 ms after exec, before the
// Kubernetes and telemetry packages that take runlet's binary over 10 ms
// to initialise. The pause process is executed twice per pod, and a runc
// sandbox's start would wait for those packages both times.
package pauseproc

import (
	"os"
	"os/signal"

	"github.com/runlet/runlet/internal/netns/loopback"

	"golang.org/x/sys/unix"
)

// Arg0 marks a process started as a pod's pause process.
const Arg0 = "runlet-pause"

// EnvHostname carries the pod's hostname to the pause process,
// EnvLoopback asks it to bring up the loopback of a network namespace of
// its own, and EnvReexec to execute itself anew once its starter has moved
// it into the pod's cgroups.
const (
	EnvHostname = "RUNLET_PAUSE_HOSTNAME"
	EnvLoopback = "RUNLET_PAUSE_LOOPBACK"
	EnvReexec   = "RUNLET_PAUSE_REEXEC"
)

func init() {
	if len(os.Args) > 0 && os.Args[0] == Arg0 {
		if os.Getenv(EnvReexec) != "" {
			os.Exit(reexecWhenMoved())
		}
		os.Exit(run())
	}
}

// reexecWhenMoved waits until the starter has moved the process into the
// pod's cgroups (fd 4 gives a byte) and executes it again there: the new
// image's memory is all charged to the pod. A failure is written to the
// starter's pipe.
func reexecWhenMoved() int {
	moved := os.NewFile(4, "moved")
	if n, _ := moved.Read(make([]byte, 1)); n != 1 {
		return 1
	}
	moved.Close()
	_ = os.Unsetenv(EnvReexec)
	err := unix.Exec("/proc/self/exe", []string{Arg0}, os.Environ())
	_, _ = os.NewFile(3, "ready").WriteString("re-executing in the pod's cgroup: " + err.Error())
	return 1
}

// run is the pause process: name the pod, then reap and wait until killed.
func run() int {
	if name := os.Getenv(EnvHostname); name != "" {
		if err := unix.Sethostname([]byte(name)); err != nil {
			return 1
		}
	}
	if os.Getenv(EnvLoopback) != "" {
		if err := loopback.Up(); err != nil {
			return 1
		}
	}
	// fd 3 tells the starter the pod is named; it must not stay open.
	ready := os.NewFile(3, "ready")
	_, _ = ready.Write([]byte{1})
	_ = ready.Close()
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, unix.SIGCHLD, unix.SIGTERM, unix.SIGINT)
	for s := range sigs {
		if s != unix.SIGCHLD {
			return 0
		}
		for {
			pid, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
	return 0
}
