package hostproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOOMKillCount(t *testing.T) {
	dir := t.TempDir()
	v1 := filepath.Join(dir, "memory.oom_control")
	_ = os.WriteFile(v1, []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"), 0o644)
	v2 := filepath.Join(dir, "memory.events")
	_ = os.WriteFile(v2, []byte("low 0\nhigh 0\nmax 4\noom 1\noom_kill 0\noom_group_kill 0\n"), 0o644)
	if n, err := oomKillCount(v1); n != 2 || err != nil {
		t.Errorf("v1 = %d, %v; want 2", n, err)
	}
	if n, err := oomKillCount(v2); n != 0 || err != nil {
		t.Errorf("v2 = %d, %v; want 0 (an OOM without a kill is none)", n, err)
	}
}

// TestOOMRecorder: a container's cgroup is learnt from its infra sibling's;
// a kill its counter shows is kept after the cgroup is gone, until the
// container is.
func TestOOMRecorder(t *testing.T) {
	root := t.TempDir()
	id, infra := strings.Repeat("c", 64), strings.Repeat("f", 64)
	r := NewOOMRecorder(root, true)
	if !r.Available() {
		t.Fatal("a v2 hierarchy at root is not available")
	}
	r.LearnSibling(id, infra, "/machine.slice/libpod-"+infra+".scope")
	want := "/machine.slice/libpod-" + id + ".scope"
	if got := r.Cgroup(id); got != want {
		t.Fatalf("learnt cgroup %q; want %q", got, want)
	}
	if _, known := r.Check(id); known {
		t.Error("a cgroup without files counted as known")
	}
	cg := filepath.Join(root, want)
	if err := os.MkdirAll(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(cg, "memory.events"), []byte("oom 1\noom_kill 1\n"), 0o644)
	if oom, known := r.Check(id); !oom || !known {
		t.Errorf("Check = %v, %v; want an OOM kill", oom, known)
	}
	_ = os.RemoveAll(cg)
	if oom, known := r.Check(id); !oom || !known || !r.WasKilled(id) {
		t.Error("the kill was forgotten with the cgroup")
	}
	r.Retain(map[string]bool{})
	if r.WasKilled(id) || r.Cgroup(id) != "" {
		t.Error("Retain kept a container that is gone")
	}
	var none *OOMRecorder
	none.Learn(id, want)
	if none.Available() || none.WasKilled(id) {
		t.Error("a nil recorder knows something")
	}
	if NewOOMRecorder(filepath.Join(root, "absent"), false).Available() {
		t.Error("a missing hierarchy is available")
	}
}
