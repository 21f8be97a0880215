package hostproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInitDropsSignal(t *testing.T) {
	id := strings.Repeat("eef8f916", 8)
	const cgroup = "8:pids:/libpod_parent/libpod-"
	status := func(nspid, sigcgt string) string {
		return "Name:\tsleep\nNSpid:\t" + nspid + "\nSigIgn:\t0000000000000000\nSigCgt:\t" + sigcgt + "\n"
	}
	cases := []struct {
		name, cgroup, status string
		sig                  int
		want                 bool
	}{
		{"init without handlers", cgroup + id, status("9787\t1", "0000000000000000"), 15, true},
		{"init with a TERM handler", cgroup + id, status("9840\t1", "0000000000014002"), 15, false},
		{"init with a TERM handler, stop signal QUIT", cgroup + id, status("9840\t1", "0000000000014002"), 3, true},
		{"not its namespace's init", cgroup + id, status("9900\t7", "0000000000000000"), 15, false},
		{"in runlet's own namespace", cgroup + id, status("9900", "0000000000000000"), 15, false},
		{"another container's process", cgroup + strings.Repeat("0", 64), status("9787\t1", "0000000000000000"), 15, false},
		{"no SigCgt line", cgroup + id, "NSpid:\t9787\t1\n", 15, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "4242")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range map[string]string{"cgroup": c.cgroup + "\n", "status": c.status} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := initDropsSignal(root, 4242, id, c.sig); got != c.want {
				t.Errorf("initDropsSignal = %v; want %v", got, c.want)
			}
		})
	}
	if initDropsSignal(t.TempDir(), 4242, id, 15) {
		t.Error("a process that is gone must not count as dropping the signal")
	}
}

func TestSignalNumber(t *testing.T) {
	for in, want := range map[string]int{"15": 15, "SIGTERM": 15, "TERM": 15, "SIGQUIT": 3, "BOGUS": 0} {
		if got := SignalNumber(in); got != want {
			t.Errorf("SignalNumber(%q) = %d; want %d", in, got, want)
		}
	}
}
