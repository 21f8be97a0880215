package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
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
// over the window.
func hostBusy(window time.Duration) float64 {
	b0, t0 := cpuTimes()
	time.Sleep(window)
	b1, t1 := cpuTimes()
	if t1 <= t0 {
		return 0
	}
	return (b1 - b0) / (t1 - t0)
}

// cpuTimes reads the "cpu" line of /proc/stat: busy and total ticks, of
// user nice system idle iowait irq softirq steal, as package stats counts
// the node's usage (guest time is in user already).
func cpuTimes() (busy, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 {
		return 0, 0
	}
	for i, f := range f[1:9] {
		v, _ := strconv.ParseFloat(f, 64)
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}
