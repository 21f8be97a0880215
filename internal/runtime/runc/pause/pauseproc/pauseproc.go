// Package pauseproc is the pause process itself: the main of runlet-pause
// (cmd/runlet-pause), and the code that takes over runlet's binary, before
// main, when that binary runs as a pod's pause process (package pause
// starts it).
//
// It imports only the standard library, x/sys and netns/loopback. Go
// initialises the packages of a binary by import path among those whose
// imports are ready, so this one runs before the Kubernetes and telemetry
// packages, which take runlet's binary tens of milliseconds to initialise:
// a runc sandbox's start would wait for them.
package pauseproc

import (
	"os"
	"os/signal"
	"strconv"

	"github.com/runlet/runlet/internal/netns/loopback"

	"golang.org/x/sys/unix"
)

// Arg0 marks a process started as a pod's pause process.
const Arg0 = "runlet-pause"

// EnvHostname carries the pod's hostname to the pause process, and
// EnvLoopback asks it to bring up the loopback of a network namespace of
// its own.
const (
	EnvHostname = "RUNLET_PAUSE_HOSTNAME"
	EnvLoopback = "RUNLET_PAUSE_LOOPBACK"
	// EnvExecFD names the descriptor the process was executed through,
	// which it closes: it holds nothing of runlet's but the pod's
	// namespaces.
	EnvExecFD = "RUNLET_PAUSE_EXEC_FD"
)

func init() {
	if len(os.Args) > 0 && os.Args[0] == Arg0 {
		os.Exit(run())
	}
}

// run is the pause process: name the pod, then reap and wait until killed.
func run() int {
	if fd, err := strconv.Atoi(os.Getenv(EnvExecFD)); err == nil && fd > 3 {
		_ = unix.Close(fd)
	}
	// Its name in ps and top, not the descriptor's number or "exe".
	_ = os.WriteFile("/proc/self/comm", []byte(Arg0), 0)
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
