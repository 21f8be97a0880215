package cgroups

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
)

func TestPodCgroupPath(t *testing.T) {
	p := PodCgroupPath("6d2f-41aa")
	if p != "/runlet/pod6d2f_41aa" || !IsPodCgroupPath(p) {
		t.Fatalf("PodCgroupPath = %q (IsPodCgroupPath %v)", p, IsPodCgroupPath(p))
	}
	for _, other := range []string{"/libpod_parent", "/runlet/pod", "/runlet/pod1/ctr", "/kubepods/pod1"} {
		if IsPodCgroupPath(other) {
			t.Errorf("IsPodCgroupPath(%q) = true", other)
		}
	}
}

// A v1 pod cgroup is made where its limits are, set, and removed, also
// from a hierarchy its runtime made it in, with what its runtime left below.
func TestPodCgroupV1(t *testing.T) {
	root := t.TempDir()
	c := PodCgroup{Root: root, Path: PodCgroupPath("u1"), Host: Host{}}
	if err := c.Make(runtime.Resources{CPUMillis: 500, CPUShares: 512, MemoryBytes: 32 << 20, PidsLimit: 100}); err != nil {
		t.Fatal(err)
	}
	cpu, mem, pids := filepath.Join(root, "cpu", c.Path), filepath.Join(root, "memory", c.Path), filepath.Join(root, "pids", c.Path)
	wantFiles(t, cpu, map[string]string{"cpu.shares": "512", "cpu.cfs_quota_us": "50000"})
	wantFiles(t, mem, map[string]string{"memory.limit_in_bytes": "33554432"})
	wantFiles(t, pids, map[string]string{"pids.max": "100"})
	if got := c.Dirs(); len(got) != 2 || got[0] != cpu || got[1] != mem {
		t.Errorf("Dirs = %v, want the cpu and memory cgroups", got)
	}

	if err := c.Update(runtime.Resources{CPUShares: 2}); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, cpu, map[string]string{"cpu.shares": "2", "cpu.cfs_quota_us": "-1"})
	wantFiles(t, mem, map[string]string{"memory.limit_in_bytes": "-1"})

	// A plain directory stands in for a cgroup: its files make it non-empty.
	for _, d := range []string{cpu, mem, pids} {
		emptyDir(t, d)
	}
	// A removed pod's own cgroup, and its container's, left behind empty.
	mkdir(t, filepath.Join(root, "freezer", c.Path, "podid", "libpod-ctr"))
	c.Remove("podid")
	for _, h := range []string{"cpu", "memory", "pids", "freezer"} {
		if _, err := os.Stat(filepath.Join(root, h, c.Path)); !os.IsNotExist(err) {
			t.Errorf("%s: the pod cgroup is still there (%v)", h, err)
		}
	}
}

// A BestEffort pod without a process limit makes no cgroup of its own: its
// runtime makes the path.
func TestPodCgroupMakeNothingToLimit(t *testing.T) {
	root := t.TempDir()
	c := PodCgroup{Root: root, Path: PodCgroupPath("u2")}
	if err := c.Make(runtime.Resources{}); err != nil {
		t.Fatal(err)
	}
	if got := c.Dirs(); len(got) != 0 {
		t.Errorf("Dirs = %v, want none", got)
	}
}

func emptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// Another sandbox's cgroup below keeps the pod cgroup.
func TestPodCgroupRemoveKeepsWhatIsInUse(t *testing.T) {
	root := t.TempDir()
	c := PodCgroup{Root: root, Path: PodCgroupPath("u3")}
	other := filepath.Join(root, "cpu", c.Path, "other-podid")
	mkdir(t, other)
	writeFile(t, filepath.Join(other, "cgroup.procs"), "42")
	c.Remove("gone-podid")
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the other sandbox's cgroup: %v", err)
	}
}
