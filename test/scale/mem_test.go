package scale

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
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
