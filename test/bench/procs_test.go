package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/runtime/hostproc"
)

// proc is one process of the host, as /proc shows it.
type proc struct {
	pid, ppid int
	cmdline   string // arguments joined by spaces
}

// procTable is every process of the host at one moment.
type procTable map[int]proc

// readProcs scans /proc; processes that end during the scan are left out.
func readProcs() procTable {
	out := procTable{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])) // f[0] is field 3 (state)
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		out[pid] = proc{pid: pid, ppid: ppid, cmdline: strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))}
	}
	return out
}

// matching lists the processes whose command line passes keep.
func (pt procTable) matching(keep func(proc) bool) []int {
	var out []int
	for pid, p := range pt {
		if keep(p) {
			out = append(out, pid)
		}
	}
	return out
}

// children lists the processes whose parent is one of parents and whose command line passes keep.
func (pt procTable) children(parents []int, keep func(proc) bool) []int {
	in := map[int]bool{}
	for _, p := range parents {
		in[p] = true
	}
	return pt.matching(func(p proc) bool { return in[p.ppid] && keep(p) })
}

// procMem is a process's resident memory in MiB: the whole set, and its proportional share of the pages
// it shares with others (PSS), which adds up across processes.
type procMem struct{ rss, pss float64 }

// readProcMem reads VmRSS from /proc/<pid>/status and Pss from /proc/<pid>/smaps_rollup; a process
// that is gone reads as zero.
func readProcMem(pid int) procMem {
	var m procMem
	m.rss = kibField(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:") / 1024
	m.pss = kibField(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss:") / 1024
	return m
}

func kibField(path, name string) float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == name {
			v, _ := strconv.ParseFloat(f[1], 64)
			return v
		}
	}
	return 0
}

// procTicks is the CPU time of a process and of its children it has waited for (utime, stime,
// cutime, cstime), in clock ticks: a helper that runs and reaps short processes (an exec's runc)
// is charged for them. A process that is gone reads as -1.
func procTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 15 {
		return -1
	}
	var sum int64
	for _, i := range []int{11, 12, 13, 14} {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		sum += v
	}
	return sum
}

// cpuWindow is the CPU that processes and the whole host used over a window, in % of one core.
type cpuWindow struct {
	procs, host float64
}

// measureCPU sleeps for the window and returns the CPU the processes (those alive at both ends) and
// the host used in it.
func measureCPU(pids []int, window time.Duration) cpuWindow {
	t0 := map[int]int64{}
	for _, p := range pids {
		t0[p] = procTicks(p)
	}
	h0, err0 := hostproc.ReadHostCPU("/proc/stat")
	start := time.Now()
	time.Sleep(window)
	h1, err1 := hostproc.ReadHostCPU("/proc/stat")
	secs := time.Since(start).Seconds()
	var ticks int64
	for p, a := range t0 {
		if b := procTicks(p); a >= 0 && b >= a {
			ticks += b - a
		}
	}
	out := cpuWindow{procs: float64(ticks) / hostproc.UserHZ / secs * 100, host: nan()}
	if err0 == nil && err1 == nil && h1.Total > h0.Total {
		// Busy is in clock ticks of all CPUs: as a share of one core's time over the window
		out.host = float64(h1.Busy-h0.Busy) / hostproc.UserHZ / secs * 100
	}
	return out
}
