package podmanservice

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// podmanDefaultRLimit is what podman gives a rootful container for nofile
// and nproc when nothing names a limit (define.RLimitDefaultValue).
const podmanDefaultRLimit = 1 << 20

// capSysResource is the bit of CAP_SYS_RESOURCE in /proc/<pid>/status CapEff.
const capSysResource = 24

// Limits are what a podman service can hand down to its containers. Without
// CAP_SYS_RESOURCE no child (conmon, the OCI runtime, the container) may get
// a hard limit above the service's own, and podman lowers its RLIMIT_NPROC
// to 32768 at start-up, so the shell's limits are not the ones that count.
type Limits struct {
	NoFile, NProc  uint64
	CapSysResource bool
	// OOMScoreAdj is the service's own oom_score_adj: without
	// CAP_SYS_RESOURCE no container may go below it.
	OOMScoreAdj int
	Source      string // where the figures came from, for the logs
}

// RLimits are the nofile and nproc limits every container must be given:
// podman's defaults clamped to the service's hard limits, or nil when the
// service may raise limits and podman's defaults work.
func (l Limits) RLimits() []RLimit {
	if l.CapSysResource {
		return nil
	}
	clamp := func(v uint64) uint64 { return min(v, podmanDefaultRLimit) }
	return []RLimit{
		{Type: "nofile", Hard: clamp(l.NoFile), Soft: clamp(l.NoFile)},
		{Type: "nproc", Hard: clamp(l.NProc), Soft: clamp(l.NProc)},
	}
}

// PeerLimits are the limits of the process serving socket, for a service
// runlet did not start: its PID comes from SO_PEERCRED. When that process is
// not visible (another PID namespace) runlet's own limits are the best guess.
func PeerLimits(socket string) Limits {
	pid, err := peerPID(socket)
	if err == nil && pid > 0 {
		if l, err := ProcessLimits(pid); err == nil {
			return l
		}
	}
	return OwnLimits()
}

func peerPID(socket string) (int, error) {
	conn, err := net.Dial("unix", socket)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	raw, err := conn.(*net.UnixConn).SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var serr error
	err = raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return 0, err
	}
	return int(cred.Pid), nil
}

// ProcessLimits reads the limits of a running service from /proc: the
// hard limits podman really runs with, and its capabilities.
func ProcessLimits(pid int) (Limits, error) {
	l := Limits{Source: fmt.Sprintf("/proc/%d/limits", pid)}
	f, err := os.Open(l.Source)
	if err != nil {
		return l, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Max open files"):
			l.NoFile = hardField(line)
		case strings.HasPrefix(line, "Max processes"):
			l.NProc = hardField(line)
		}
	}
	if l.NoFile == 0 || l.NProc == 0 {
		return l, fmt.Errorf("%s: limits not found", l.Source)
	}
	l.CapSysResource = hasCap(pid, capSysResource)
	l.OOMScoreAdj = readOOMScoreAdj(fmt.Sprintf("/proc/%d/oom_score_adj", pid))
	return l, nil
}

// hardField returns the "Hard Limit" column of a /proc/<pid>/limits line;
// the description may contain spaces, so count from the right.
func hardField(line string) uint64 {
	f := strings.Fields(line)
	if len(f) < 3 {
		return 0
	}
	// A units column follows for most rows ("files", "processes").
	hard := f[len(f)-2]
	if hard == "unlimited" {
		return unix.RLIM_INFINITY
	}
	v, _ := strconv.ParseUint(hard, 10, 64)
	return v
}

func hasCap(pid, bit int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			mask, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return mask&(1<<bit) != 0
		}
	}
	return false
}

// OwnLimits are runlet's own limits: the fallback when the service's
// process cannot be read.
func OwnLimits() Limits {
	l := Limits{Source: "runlet's own getrlimit"}
	var r unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &r) == nil {
		l.NoFile = r.Max
	}
	if unix.Getrlimit(unix.RLIMIT_NPROC, &r) == nil {
		l.NProc = r.Max
	}
	l.CapSysResource = hasCap(os.Getpid(), capSysResource)
	l.OOMScoreAdj = readOOMScoreAdj("/proc/self/oom_score_adj")
	return l
}

func readOOMScoreAdj(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return v
}
