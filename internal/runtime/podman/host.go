package podman

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"golang.org/x/sys/unix"
)

// podmanDefaultRLimit is what podman gives a rootful container for nofile
// and nproc when the create spec names none (define.RLimitDefaultValue).
const podmanDefaultRLimit = 1 << 20

// capSysResource is the bit of CAP_SYS_RESOURCE in /proc/<pid>/status CapEff.
const capSysResource = 24

// hostLimits are the rlimits the podman service can hand down. Without
// CAP_SYS_RESOURCE no child (conmon, the OCI runtime, the container) may get
// a hard limit above the service's own, and podman lowers its RLIMIT_NPROC
// to 32768 at start-up, so the shell's limits are not the ones that count.
type hostLimits struct {
	NoFile, NProc  uint64
	CapSysResource bool
	// OOMScoreAdj is the service's own oom_score_adj: without
	// CAP_SYS_RESOURCE no container may go below it.
	OOMScoreAdj int
	Source      string // where the figures came from, for the logs
}

// rlimits returns the r_limits every create spec should carry, or nil when
// podman's defaults work (the service may raise limits).
func (l hostLimits) rlimits() []libpod.RLimit {
	if l.CapSysResource {
		return nil
	}
	clamp := func(v uint64) uint64 { return min(v, podmanDefaultRLimit) }
	return []libpod.RLimit{
		{Type: "nofile", Hard: clamp(l.NoFile), Soft: clamp(l.NoFile)},
		{Type: "nproc", Hard: clamp(l.NProc), Soft: clamp(l.NProc)},
	}
}

// serviceLimits reads the limits of the process serving socket: its PID
// comes from SO_PEERCRED, its figures from /proc. When the service is not
// visible (another PID namespace) runlet's own limits are the best guess.
func serviceLimits(socket string) hostLimits {
	pid, err := peerPID(socket)
	if err == nil && pid > 0 {
		if l, err := procLimits(pid); err == nil {
			return l
		}
	}
	return ownLimits()
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

// procLimits parses /proc/<pid>/limits and the capability mask.
func procLimits(pid int) (hostLimits, error) {
	l := hostLimits{Source: fmt.Sprintf("/proc/%d/limits", pid)}
	f, err := os.Open(fmt.Sprintf("/proc/%d/limits", pid))
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

func ownLimits() hostLimits {
	l := hostLimits{Source: "runlet's own getrlimit"}
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

// chooseOCIRuntime picks the OCI runtime for every container. crun refuses
// cgroup v1 hosts with a cgroup2 hierarchy mounted too ("cgroups in hybrid
// mode not supported"), and podman reports such hosts as "v1"; runc handles
// every v1 layout, so it is preferred there when installed.
//
// Which binaries a remote host has cannot be seen from here: its default is
// kept.
func chooseOCIRuntime(info libpod.Info, override string, local bool) string {
	if override != "" {
		return override
	}
	def := info.Host.OCIRuntime.Name
	if local && info.Host.CgroupVersion == "v1" && def != "runc" {
		if haveBinary("runc") {
			return "runc"
		}
	}
	return def
}

// haveBinary looks in PATH and in the sbin directories a non-root PATH lacks.
func haveBinary(name string) bool {
	if _, err := exec.LookPath(name); err == nil {
		return true
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/sbin"} {
		if st, err := os.Stat(dir + "/" + name); err == nil && st.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}
