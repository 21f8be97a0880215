package stats

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/runtime/hostproc"
)

// procFS reads the host's figures below a procfs root ("/proc" outside tests).
type procFS string

// cpuUsage returns the CPU time the host spent busy (all but idle and
// iowait) and the boot time, from /proc/stat.
func (p procFS) cpuUsage() (usageNanos uint64, boot time.Time, err error) {
	h, err := hostproc.ReadHostCPU(filepath.Join(string(p), "stat"))
	return h.Busy * uint64(time.Second/hostproc.UserHZ), h.Boot, err
}

// keyValues parses "key value [unit]" or "key: value kB" lines; kB values
// are returned in bytes.
func (p procFS) keyValues(name string) (map[string]uint64, error) {
	return hostproc.KeyValues(filepath.Join(string(p), name))
}

func (p procFS) netDevs() ([]hostproc.NetDev, error) {
	return hostproc.NetDevs(filepath.Join(string(p), "net", "dev"))
}

// defaultInterface names the interface of the default route, the one the
// kubelet (cAdvisor) reports as the node's network; "" when there is none.
func (p procFS) defaultInterface() string {
	b, err := os.ReadFile(filepath.Join(string(p), "net", "route"))
	if err != nil {
		return ""
	}
	for _, line := range bytes.Split(b, []byte("\n"))[1:] {
		f := strings.Fields(string(line))
		if len(f) >= 2 && f[1] == "00000000" {
			return f[0]
		}
	}
	return ""
}

// pidMax is the kernel's PID limit.
func (p procFS) pidMax() (int64, error) {
	b, err := os.ReadFile(filepath.Join(string(p), "sys", "kernel", "pid_max"))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// threads is the number of tasks on the host, the kubelet's "curproc".
func (p procFS) threads() (int64, error) {
	b, err := os.ReadFile(filepath.Join(string(p), "loadavg"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 4 {
		return 0, fmt.Errorf("malformed %s/loadavg", p)
	}
	_, total, _ := strings.Cut(f[3], "/")
	return strconv.ParseInt(total, 10, 64)
}
