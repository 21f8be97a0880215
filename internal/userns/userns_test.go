package userns

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/runlet/runlet/internal/poddir"
)

func TestMappingsKeptPerPod(t *testing.T) {
	dirs := poddir.New(t.TempDir())
	m, err := New(dirs, DefaultHostIDs)
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.Mappings("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Mappings("b")
	if err != nil {
		t.Fatal(err)
	}
	ua, ub := a.UIDs[0], b.UIDs[0]
	if ua.Length != IDsPerPod || ua.ContainerID != 0 || ua.HostID < IDsPerPod || ua.HostID%IDsPerPod != 0 || a.GIDs[0] != ua {
		t.Errorf("pod a: %+v; want root mapped to an aligned range of %d above the host's", a, IDsPerPod)
	}
	if ua.HostID == ub.HostID {
		t.Errorf("pods a and b share the range from %d", ua.HostID)
	}
	again, err := m.Mappings("a")
	if err != nil || again.UIDs[0] != ua {
		t.Errorf("pod a again: %+v, %v; want %+v", again, err, ua)
	}
	// A restarted runlet knows both ranges from the pods' directories.
	m2, err := New(dirs, DefaultHostIDs)
	if err != nil {
		t.Fatal(err)
	}
	if m2.usedBy["a"] != ua.HostID || m2.usedBy["b"] != ub.HostID {
		t.Errorf("after a restart: %v; want a at %d, b at %d", m2.usedBy, ua.HostID, ub.HostID)
	}
	if got, err := m2.Mappings("a"); err != nil || got.UIDs[0] != ua {
		t.Errorf("pod a after a restart: %+v, %v; want %+v", got, err, ua)
	}
}

func TestRangeFreedWithThePodsDirectory(t *testing.T) {
	dirs := poddir.New(t.TempDir())
	m, err := New(dirs, DefaultHostIDs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Mappings("gone"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dirs.Pod("gone")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Mappings("new"); err != nil {
		t.Fatal(err)
	}
	if _, held := m.usedBy["gone"]; held || len(m.used) != 1 {
		t.Errorf("ranges %v after the pod's directory went; want only the new pod's", m.usedBy)
	}
}

func TestInvalidMappingsFileRefused(t *testing.T) {
	dirs := poddir.New(t.TempDir())
	for name, content := range map[string]string{
		"not json":    "{",
		"two ranges":  `{"uidMappings":[{"containerId":0,"hostId":65536,"length":65536},{"containerId":0,"hostId":131072,"length":65536}],"gidMappings":[]}`,
		"root free":   `{"uidMappings":[{"containerId":1,"hostId":65536,"length":65536}],"gidMappings":[{"containerId":1,"hostId":65536,"length":65536}]}`,
		"unaligned":   `{"uidMappings":[{"containerId":0,"hostId":65537,"length":65536}],"gidMappings":[{"containerId":0,"hostId":65537,"length":65536}]}`,
		"host's root": `{"uidMappings":[{"containerId":0,"hostId":0,"length":65536}],"gidMappings":[{"containerId":0,"hostId":0,"length":65536}]}`,
	} {
		dir := dirs.Pod("p")
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, mappingsFile), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := New(dirs, DefaultHostIDs); err == nil {
			t.Errorf("%s: New accepted %s", name, content)
		}
		m := &Manager{dirs: dirs, first: IDsPerPod, slots: 1, usedBy: map[string]uint32{}, used: map[uint32]string{}}
		if _, err := m.Mappings("p"); err == nil {
			t.Errorf("%s: Mappings accepted %s", name, content)
		}
	}
}

func TestConfiguredRange(t *testing.T) {
	ids, err := parseGetSubIDs("0: kubelet 131072 131072\n")
	if err != nil || ids != (HostIDs{First: 131072, Length: 131072}) {
		t.Fatalf("parse = %+v, %v", ids, err)
	}
	if err := ids.check(3); err == nil {
		t.Error("2 ranges accepted for 3 pods")
	}
	for _, bad := range []HostIDs{{First: 65537, Length: 65536}, {First: 0, Length: 65536}, {First: 65536, Length: 1000}} {
		if err := bad.check(1); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	for _, out := range []string{"", "0: kubelet 65536\n", "0: kubelet 65536 65536\n1: kubelet 0 65536\n", "0: kubelet x 65536"} {
		if _, err := parseGetSubIDs(out); err == nil {
			t.Errorf("parsed %q", out)
		}
	}
	m, err := New(poddir.New(t.TempDir()), ids)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint32]bool{}
	for _, uid := range []string{"a", "b"} {
		ns, err := m.Mappings(uid)
		if err != nil {
			t.Fatal(err)
		}
		got[ns.UIDs[0].HostID] = true
	}
	if !got[131072] || !got[196608] {
		t.Errorf("ranges %v; want the two of the configured IDs", got)
	}
	if _, err := m.Mappings("c"); err == nil {
		t.Error("a third pod got a range out of two")
	}
}
