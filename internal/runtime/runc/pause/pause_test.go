package pause

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPauseHoldsNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("new namespaces need root")
	}
	p, err := Start(Namespaces{Net: true, IPC: true, UTS: true, PID: true}, "pod-a")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill(5 * time.Second) })
	if !p.Alive() {
		t.Fatal("the pause process is not alive after Start")
	}
	for _, typ := range []string{"net", "ipc", "uts", "pid"} {
		mine, _ := os.Readlink("/proc/self/ns/" + typ)
		if typ == "pid" {
			mine, _ = os.Readlink("/proc/self/ns/pid_for_children")
		}
		its, err := os.Readlink(p.NS(typ))
		if err != nil || its == mine {
			t.Errorf("%s namespace: pause %q, runlet %q (%v)", typ, its, mine, err)
		}
	}
	// It is PID 1 of its namespace, named after the pod.
	status, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/status")
	if err != nil || !strings.Contains(string(status), "NSpid:\t"+strconv.Itoa(p.PID)+"\t1\n") {
		t.Errorf("not the init of its PID namespace:\n%s", status)
	}
	if err := p.Kill(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Alive() {
		t.Error("alive after Kill")
	}
}

func TestHostNamespaces(t *testing.T) {
	p, err := Start(Namespaces{}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill(5 * time.Second) })
	mine, _ := os.Readlink("/proc/self/ns/uts")
	if its, _ := os.Readlink(p.NS("uts")); its != mine {
		t.Errorf("uts %q; want the host's %q", its, mine)
	}
}

func TestReusedPIDIsNotAlive(t *testing.T) {
	p := Process{PID: os.Getpid(), StartTime: 1}
	if p.Alive() {
		t.Error("a process with another start time is taken for the pause process")
	}
}
