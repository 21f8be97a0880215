package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/hostproc"
)

// idle is what runlet and the podman service cost while nothing happens.
type idle struct {
	cpu, svcCPU float64 // % of one core
	mem, svcMem mem
}

// atRest lets the node settle, reads both processes' memory, then their CPU
// over the window.
func atRest(t *testing.T, cfg config, pid, svcPID int, metricsURL string) idle {
	time.Sleep(cfg.settle)
	r := idle{mem: readMem(t, pid, metricsURL), svcMem: readMem(t, svcPID, "")}
	r.cpu, r.svcCPU = cpuOver(t, cfg.cpuWindow, pid, svcPID)
	return r
}

// cpuOver is runlet's and the podman service's CPU over the window, in % of one core.
func cpuOver(t *testing.T, window time.Duration, pid, svcPID int) (float64, float64) {
	a0, b0, t0 := cpuTicks(t, pid), cpuTicks(t, svcPID), time.Now()
	time.Sleep(window)
	perCent := func(ticks int64) float64 { return float64(ticks) / hostproc.UserHZ / time.Since(t0).Seconds() * 100 }
	return perCent(cpuTicks(t, pid) - a0), perCent(cpuTicks(t, svcPID) - b0)
}

// cpuTicks is utime+stime of a process from /proc/<pid>/stat, in clock ticks.
func cpuTicks(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}
