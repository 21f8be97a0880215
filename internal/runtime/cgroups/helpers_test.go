package cgroups

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// hostCgroups skips a test that needs to make cgroups on this host.
func hostCgroups(t *testing.T) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making cgroups needs root")
	}
	hs, err := Hierarchies(Root)
	if err != nil {
		t.Skip(err)
	}
	return hs
}

// A helper is made out of its starter's cgroups in every hierarchy: in
// HelperPath, but where it has a cgroup of its own in that hierarchy.
func TestStartInHelperDirs(t *testing.T) {
	hs := hostCgroups(t)
	var own []string
	ownPath := ""
	if mem := filepath.Join(Root, "memory"); len(hs) > 1 && isCgroup(mem) {
		ownPath = "/runlet-cgroups-test-" + strconv.Itoa(os.Getpid())
		own = []string{filepath.Join(mem, ownPath)}
		if err := Make(mem, own[0]); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Rmdir(own[0]) })
	}
	dirs, err := HelperDirs(Root, own)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != len(hs) {
		t.Fatalf("HelperDirs = %v; want one per hierarchy of %v", dirs, hs)
	}
	cmd, err := StartIn(func() *exec.Cmd { return exec.Command("sleep", "60") }, dirs)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(b))
	if len(lines) != len(hs) {
		t.Errorf("the helper is in %d hierarchies (%q); want the %d mounted", len(lines), lines, len(hs))
	}
	for _, l := range lines {
		want := HelperPath
		if strings.Contains(l, ":memory:") && ownPath != "" {
			want = ownPath
		}
		if f := strings.SplitN(l, ":", 3); len(f) != 3 || f[2] != want {
			t.Errorf("the helper's cgroup %q; want %s", l, want)
		}
	}
}

// A new v1 cpuset cgroup gets its parent's CPUs and memory nodes, so that
// a process can join it.
func TestMakeCpuset(t *testing.T) {
	hostCgroups(t)
	h := filepath.Join(Root, "cpuset")
	if !isCgroup(h) || cgroup2(h) {
		t.Skip("no v1 cpuset hierarchy")
	}
	top := filepath.Join(h, "runlet-cgroups-test-"+strconv.Itoa(os.Getpid()))
	dir := filepath.Join(top, "a")
	if err := Make(h, dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Rmdir(dir); _ = syscall.Rmdir(top) })
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		got, _ := os.ReadFile(filepath.Join(dir, f))
		want, _ := os.ReadFile(filepath.Join(h, f))
		if strings.TrimSpace(string(got)) != strings.TrimSpace(string(want)) {
			t.Errorf("%s = %q; want the root's %q", f, got, want)
		}
	}
	cmd, err := StartIn(func() *exec.Cmd { return exec.Command("true") }, []string{dir})
	if err != nil {
		t.Fatalf("starting a process in the new cpuset cgroup: %v", err)
	}
	_ = cmd.Wait()
}

// What a pod that is gone left goes from every hierarchy, cgroups below it
// and the processes in them included.
func TestDestroyLeftovers(t *testing.T) {
	hs := hostCgroups(t)
	pod := PodCgroupPath("runlet-cgroups-test-" + strconv.Itoa(os.Getpid()))
	var dirs []string
	for _, h := range hs {
		if isCgroup(h) {
			d := filepath.Join(h, pod, "libpod-id", "ctr")
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			dirs = append(dirs, d)
		}
	}
	cmd, err := StartIn(func() *exec.Cmd { return exec.Command("sleep", "60") }, dirs[:1])
	if err != nil {
		_ = Destroy(Root, pod)
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	if err := Destroy(Root, pod); err != nil {
		t.Errorf("Destroy: %v", err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Dir(filepath.Dir(d))); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", d, err)
		}
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the process in the pod cgroup ended with %v; want killed", err)
	}
}
