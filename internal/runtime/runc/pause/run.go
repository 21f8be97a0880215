package pause

import (
	"os"
	"os/signal"

	"github.com/runlet/runlet/internal/netns"

	"golang.org/x/sys/unix"
)

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
	_ = os.Unsetenv(envReexec)
	err := unix.Exec("/proc/self/exe", []string{Arg0}, os.Environ())
	_, _ = os.NewFile(3, "ready").WriteString("re-executing in the pod's cgroup: " + err.Error())
	return 1
}

// run is the pause process: name the pod, then reap and wait until killed.
func run() int {
	if name := os.Getenv(envHostname); name != "" {
		if err := unix.Sethostname([]byte(name)); err != nil {
			return 1
		}
	}
	if os.Getenv(envLoopback) != "" {
		if err := netns.LoopbackUp(); err != nil {
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
