package stats

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/runtime"
)

// fakeFiles places each container's log and writable layer under dir.
type fakeFiles struct {
	dir   string
	asked map[string]int
}

func (f *fakeFiles) ContainerFiles(_ context.Context, id string) (runtime.ContainerFiles, error) {
	f.asked[id]++
	return runtime.ContainerFiles{LogPath: filepath.Join(f.dir, id, "ctr.log"), RootfsDir: filepath.Join(f.dir, id, "diff")}, nil
}

func (f *fakeFiles) ReopenContainerLog(context.Context, string) error { return nil }

func writeFile(t *testing.T, path string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPodDiskStats: a pod's volumes under its directory, its containers'
// logs (rotated files too) and writable layers, and the sum as its
// ephemeral storage; volumes of other plugins are not the pod's.
func TestPodDiskStats(t *testing.T) {
	root := t.TempDir()
	dirs := poddir.New(root)
	writeFile(t, filepath.Join(dirs.Volume("u1", "kubernetes.io/empty-dir", "data"), "fill"), 1<<20)
	writeFile(t, filepath.Join(dirs.Volume("u1", "kubernetes.io/configmap", "cfg"), "key"), 10)
	writeFile(t, filepath.Join(dirs.Volume("u1", "kubernetes.io/local-volume", "pv"), "big"), 4<<20)
	writeFile(t, dirs.EtcHosts("u1"), 100)
	files := &fakeFiles{dir: t.TempDir(), asked: map[string]int{}}
	writeFile(t, filepath.Join(files.dir, "c2", "ctr.log"), 64<<10)
	writeFile(t, filepath.Join(files.dir, "c2", "ctr.log.1"), 64<<10)
	writeFile(t, filepath.Join(files.dir, "c2", "diff", "etc", "x"), 128<<10)
	b := &fakeBackend{stats: map[string]runtime.ContainerStats{"c2": {ID: "c2", Time: t0}, "s1": {ID: "s1", Time: t0}}}
	c := New(Config{NodeName: "n1", Backend: b, Pods: func() []*runtime.PodStatus { return twoPods() },
		NodeFsPath: root, ImageFsPath: files.dir, ProcRoot: "testdata/proc", Dirs: dirs, Files: files})

	s, err := c.Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := s.Pods[0]
	var names []string
	var volBytes uint64
	for _, v := range p.VolumeStats {
		names = append(names, v.Name)
		volBytes += *v.UsedBytes
		if v.CapacityBytes == nil || *v.InodesUsed == 0 {
			t.Errorf("volume %s: %+v", v.Name, v.FsStats)
		}
	}
	sort.Strings(names)
	if len(names) != 2 || names[0] != "cfg" || names[1] != "data" {
		t.Errorf("volumes %v; want cfg and data (a claim's volume is not the pod's storage)", names)
	}
	if volBytes < 1<<20 || volBytes > 2<<20 {
		t.Errorf("volumes use %d bytes; want about 1Mi", volBytes)
	}
	app := p.Containers[0]
	if app.Logs == nil || *app.Logs.UsedBytes < 128<<10 || *app.Logs.InodesUsed != 2 {
		t.Errorf("app logs %+v; want both log files", app.Logs)
	}
	if app.Rootfs == nil || *app.Rootfs.UsedBytes < 128<<10 {
		t.Errorf("app rootfs %+v", app.Rootfs)
	}
	if sc := p.Containers[1]; sc.Logs != nil || sc.Rootfs != nil {
		t.Errorf("sidecar whose files are not there: logs %+v rootfs %+v; want none", sc.Logs, sc.Rootfs)
	}
	eph := p.EphemeralStorage
	want := volBytes + *app.Logs.UsedBytes + *app.Rootfs.UsedBytes
	if eph == nil || *eph.UsedBytes < want || *eph.UsedBytes > want+8192 || eph.CapacityBytes == nil {
		t.Errorf("ephemeral storage %+v; want volumes + logs + rootfs (%d) + etc-hosts", eph, want)
	}

	if _, err := c.Summary(context.Background()); err != nil {
		t.Fatal(err)
	}
	if files.asked["c2"] != 1 || files.asked["s1"] != 1 {
		t.Errorf("container files asked %v; want once per container", files.asked)
	}
	if _, err := New(Config{NodeName: "n1", Backend: b, Pods: func() []*runtime.PodStatus { return nil }, ProcRoot: "testdata/proc"}).Summary(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.cfg.Pods = func() []*runtime.PodStatus { return nil }
	if _, err := c.Summary(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(c.files.byID) != 0 {
		t.Errorf("files of gone containers kept: %v", c.files.byID)
	}
}

// TestNodeSummary: the node's part alone asks the backend nothing.
func TestNodeSummary(t *testing.T) {
	b := &fakeBackend{}
	s, err := newTestCollector(b, twoPods()).NodeSummary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 0 || len(b.asked) != 0 {
		t.Errorf("node summary has %d pods, asked the backend for %v", len(s.Pods), b.asked)
	}
	if s.Node.Fs == nil || s.Node.Memory == nil || s.Node.Rlimit == nil || s.Node.Runtime == nil {
		t.Errorf("node figures missing: %+v", s.Node)
	}
}
