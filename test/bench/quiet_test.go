package bench

import (
	"fmt"
	"time"

	"github.com/runlet/runlet/internal/runtime/hostproc"
)

// quietBusy is how busy the host may be, as a share of all its cores,
// before a phase begins: the control plane and the services at rest
// stay well under it.
const quietBusy = 0.15

// waitQuiet waits, up to limit, until the host's CPUs have been less than
// quietBusy busy over two seconds, so that a phase is not measured while
// the one before it is still being cleaned up (its pods' deletion, the
// namespace's garbage collection). It returns a line for the report.
func waitQuiet(phase string, limit time.Duration) string {
	start := time.Now()
	busy := 1.0
	for time.Since(start) < limit {
		if busy = hostBusy(2 * time.Second); busy < quietBusy {
			break
		}
	}
	waited := time.Since(start).Round(time.Second)
	line := fmt.Sprintf("%s: began with the host %.0f %% busy, after %v of waiting for it to settle", phase, busy*100, waited)
	if busy >= quietBusy {
		line = fmt.Sprintf("%s: began with the host still %.0f %% busy after %v (more than %.0f %%)", phase, busy*100, waited, quietBusy*100)
	}
	progress("%s", line)
	return line
}

// hostBusy is the share of all CPUs' time spent outside idle and iowait
// over the window, as package stats counts the node's usage.
func hostBusy(window time.Duration) float64 {
	h0, err0 := hostproc.ReadHostCPU("/proc/stat")
	time.Sleep(window)
	h1, err1 := hostproc.ReadHostCPU("/proc/stat")
	if err0 != nil || err1 != nil || h1.Total <= h0.Total {
		return 0
	}
	return float64(h1.Busy-h0.Busy) / float64(h1.Total-h0.Total)
}
