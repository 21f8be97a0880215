package scale

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// memory is one process's resident memory (RSS) and its proportional share
// (PSS: pages shared with the set's other nodes, the binary's text first,
// split among them), in KiB, from /proc/<pid>/smaps_rollup.
type memory struct{ rss, pss float64 }

func readMemory(pid int) (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	var m memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		v, _ := strconv.ParseFloat(fields[1], 64)
		switch fields[0] {
		case "Rss:":
			m.rss = v
		case "Pss:":
			m.pss = v
		}
	}
	return m, sc.Err()
}

// memStats are a set's nodes' memory: the median and the largest, in MiB.
type memStats struct {
	rssMedian, rssMax, pssMedian, pssMax float64
	n                                    int
}

func (s *nodeSet) memory() (memStats, error) {
	var rss, pss []float64
	for _, p := range s.nodes {
		m, err := readMemory(p.cmd.Process.Pid)
		if err != nil {
			return memStats{}, fmt.Errorf("%s: %w", p.name, err)
		}
		rss, pss = append(rss, m.rss/1024), append(pss, m.pss/1024)
	}
	sort.Float64s(rss)
	sort.Float64s(pss)
	if len(rss) == 0 {
		return memStats{}, nil
	}
	return memStats{rssMedian: rss[len(rss)/2], rssMax: rss[len(rss)-1], pssMedian: pss[len(pss)/2], pssMax: pss[len(pss)-1], n: len(rss)}, nil
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's times.
const clockTicks = 100

// cpuSeconds is the CPU time each node's process used so far (user +
// system, /proc/<pid>/stat), by node.
func (s *nodeSet) cpuSeconds() map[string]float64 {
	out := map[string]float64{}
	for _, p := range s.nodes {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
		if err != nil {
			continue
		}
		// The fields after the command's ")" start at the state, field 3;
		// utime and stime are fields 14 and 15.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 12 {
			u, _ := strconv.ParseFloat(f[11], 64)
			st, _ := strconv.ParseFloat(f[12], 64)
			out[p.name] = (u + st) / clockTicks
		}
	}
	return out
}

// cpuMedian is the median share of a core the nodes used between two
// readings w apart, in per cent.
func cpuMedian(before, after map[string]float64, w time.Duration) float64 {
	var shares []float64
	for name, a := range after {
		if b, ok := before[name]; ok {
			shares = append(shares, (a-b)/w.Seconds()*100)
		}
	}
	if len(shares) == 0 {
		return 0
	}
	sort.Float64s(shares)
	return shares[len(shares)/2]
}
