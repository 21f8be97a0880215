package hostproc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// procRoot is where the host's processes are read.
const procRoot = "/proc"

// SignalNumber reads the kill API's spelling of a signal: a number, or a
// name with or without its SIG prefix. 0 when unknown.
func SignalNumber(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	if !strings.HasPrefix(s, "SIG") {
		s = "SIG" + s
	}
	return int(unix.SignalNum(s))
}

// InitDropsSignal reports whether process pid is the init of a nested PID
// namespace that has no handler for sig: the kernel then drops the signal,
// and a stop with it waits out the whole grace period. The process must be
// the container's own (its cgroup names the container): runlet may run in
// a PID namespace of its own, or beside a runtime on another machine, where
// the same number is someone else.
func InitDropsSignal(pid int, containerID string, sig int) bool {
	return initDropsSignal(procRoot, pid, containerID, sig)
}

func initDropsSignal(root string, pid int, containerID string, sig int) bool {
	if containerID == "" || sig < 1 || sig > 64 {
		return false
	}
	dir := filepath.Join(root, strconv.Itoa(pid))
	cgroups, err := os.ReadFile(filepath.Join(dir, "cgroup"))
	if err != nil || !bytes.Contains(cgroups, []byte(containerID)) {
		return false
	}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return false
	}
	var nspid []string
	caught, known := uint64(0), false
	for _, line := range strings.Split(string(status), "\n") {
		key, value, _ := strings.Cut(line, ":")
		switch key {
		case "NSpid":
			nspid = strings.Fields(value)
		case "SigCgt":
			caught, err = strconv.ParseUint(strings.TrimSpace(value), 16, 64)
			known = err == nil
		}
	}
	isInit := len(nspid) > 1 && nspid[len(nspid)-1] == "1"
	return isInit && known && caught&(1<<(sig-1)) == 0
}
