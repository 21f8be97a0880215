package hostproc

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// KeyValues parses a file of "key value [unit]" or "key: value kB" lines
// (/proc/meminfo, /proc/vmstat, a cgroup's memory.stat or cpu.stat); kB
// values are returned in bytes.
func KeyValues(path string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]uint64{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 2 {
			continue
		}
		v, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) == 3 && fields[2] == "kB" {
			v *= 1024
		}
		out[strings.TrimSuffix(fields[0], ":")] = v
	}
	return out, s.Err()
}

// NetDev is one interface's counters from a net/dev file.
type NetDev struct {
	Name                               string
	RxBytes, RxErrors, TxBytes, TxErrs uint64
}

// NetDevs reads a net/dev file: /proc/net/dev for runlet's network,
// /proc/<pid>/net/dev for a process's.
func NetDevs(path string) ([]NetDev, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []NetDev
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		f := strings.Fields(rest)
		if !ok || len(f) < 11 || strings.Contains(name, "|") {
			continue
		}
		n := func(i int) uint64 { v, _ := strconv.ParseUint(f[i], 10, 64); return v }
		out = append(out, NetDev{Name: strings.TrimSpace(name), RxBytes: n(0), RxErrors: n(2), TxBytes: n(8), TxErrs: n(10)})
	}
	return out, nil
}

// UserHZ is the unit of the CPU times in /proc/stat and /proc/<pid>/stat,
// clock ticks per second. It is 100 on every Linux ABI Go supports, and
// reading it needs sysconf (cgo), so it is a constant.
const UserHZ = 100

// HostCPU is the host's CPU time from a stat file (/proc/stat), in clock
// ticks (UserHZ), and its boot time.
type HostCPU struct {
	// Busy is all but idle and iowait: user nice system irq softirq steal,
	// as the kubelet (cAdvisor) counts a node's usage; guest time is in
	// user already.
	Busy, Total uint64
	Boot        time.Time
}

// ReadHostCPU reads the "cpu" and "btime" lines of a stat file.
func ReadHostCPU(path string) (HostCPU, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return HostCPU{}, err
	}
	var h HostCPU
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 9 && f[0] == "cpu":
			for i, s := range f[1:9] { // user nice system idle iowait irq softirq steal
				v, _ := strconv.ParseUint(s, 10, 64)
				h.Total += v
				if i != 3 && i != 4 {
					h.Busy += v
				}
			}
			found = true
		case len(f) == 2 && f[0] == "btime":
			sec, _ := strconv.ParseInt(f[1], 10, 64)
			h.Boot = time.Unix(sec, 0)
		}
	}
	if !found {
		return HostCPU{}, fmt.Errorf("no cpu line in %s", path)
	}
	return h, nil
}
