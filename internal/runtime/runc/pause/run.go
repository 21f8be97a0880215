package pause

import (
	"os"
	"os/signal"

	"github.com/runlet/runlet/internal/netns"

	"golang.org/x/sys/unix"
)

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
