package pause

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPauseHoldsNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("new namespaces need root")
	}
	p, err := Start(Config{Namespaces: Namespaces{Net: true, IPC: true, UTS: true, PID: true}, Hostname: "pod-a"})
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
	p, err := Start(Config{})
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

// memoryCgroup makes a v1 memory cgroup of the test's own with limit, or
// skips where there is none to make.
func memoryCgroup(t *testing.T, limit string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root")
	}
	dir := filepath.Join("/sys/fs/cgroup/memory", "runlet-pause-test-"+strconv.Itoa(os.Getpid())+"-"+strings.ReplaceAll(t.Name(), "/", "-"))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("no cgroup v1 memory hierarchy here: %v", err)
	}
	t.Cleanup(func() { _ = os.Remove(dir) })
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(limit), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPauseRunsInThePodCgroup(t *testing.T) {
	dir := memoryCgroup(t, "64M")
	p, err := Start(Config{Namespaces: Namespaces{UTS: true}, Hostname: "pod-b", Cgroups: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill(5 * time.Second) })
	procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if strings.TrimSpace(string(procs)) != strconv.Itoa(p.PID) {
		t.Errorf("cgroup.procs %q; want the pause process %d alone", procs, p.PID)
	}
	// Its image was made there: the cgroup holds its memory.
	usage, _ := os.ReadFile(filepath.Join(dir, "memory.usage_in_bytes"))
	if n, _ := strconv.Atoi(strings.TrimSpace(string(usage))); n < 256<<10 {
		t.Errorf("memory.usage_in_bytes %q; want the pause process's memory charged to its cgroup", usage)
	}
}

func TestPauseBeyondThePodsMemoryLimit(t *testing.T) {
	dir := memoryCgroup(t, "4096")
	_, err := Start(Config{Cgroups: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), "memory limit is too low") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Start in a cgroup limited to 4 KiB: %v; want the cgroup and its memory limit named", err)
	}
}
