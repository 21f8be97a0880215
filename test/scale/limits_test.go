package scale

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// inotifyPerNode is what one node may hold of inotify instances: kubemark's
// hollow kubelet holds two (its static pod dir and its plugin registry).
const inotifyPerNode = 2

// raiseLimits makes room for a set of nodes on this machine: each node
// process inherits the open files limit raised to the hard one, and the
// inotify instances that all nodes of a set need together are allowed
// (the kernel's default, 128, is less than 100 kubemark nodes hold). The
// host's limit is put back once the set's nodes have stopped (cleanups run
// last in, first out, and the nodes start after this).
func raiseLimits(t *testing.T, nodes int) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Logf("raising the open files limit: %v", err)
		}
	}
	const path = "/proc/sys/fs/inotify/max_user_instances"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	have, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if need := inotifyPerNode*nodes + 256; have < need {
		if err := os.WriteFile(path, []byte(strconv.Itoa(need)), 0o644); err != nil {
			t.Fatalf("%d nodes need %d inotify instances, %s allows %d: %v", nodes, need, path, have, err)
		}
		progress("raised %s from %d to %d", path, have, need)
		t.Cleanup(func() {
			if err := os.WriteFile(path, []byte(strconv.Itoa(have)), 0o644); err != nil {
				t.Logf("putting %s back to %d: %v", path, have, err)
			}
		})
	}
}
