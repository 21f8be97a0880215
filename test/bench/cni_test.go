package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/network/cni"
	"github.com/runlet/runlet/internal/runtime/podman"
	"github.com/runlet/runlet/test/e2e/framework"
)

// benchCNICIDR is the bench's own kubenet range, apart from the local clusters' 10.244.0.0/16.
const benchCNICIDR = "10.99.0.0/24"

// benchRawCNI starts the raw pods again on the network runlet gives them: a namespace of the pod's
// own, CNI ADD (runlet's kubenet: bridge, host-local), and the container joining it by path. Against
// raw's podman bridge, the difference is what the pod network costs a start.
func benchRawCNI(t *testing.T, ctx context.Context, cfg config, be *podman.Backend, run string, r *results) {
	dir := t.TempDir()
	net, err := cni.New(cni.Config{Mode: cni.ModeKubenet, BinDirs: []string{"/opt/cni/bin", "/usr/lib/cni"},
		StateDir: filepath.Join(dir, "network"), NetNSDir: framework.NetNSDir, Node: "bench-cni-" + run})
	if err != nil {
		t.Fatal(err)
	}
	net.SetPodCIDRs([]string{benchCNICIDR})
	if err := net.Status(); err != nil {
		t.Fatal(err)
	}
	var attached []string
	defer func() {
		removeRaw(context.Background(), be.Client(), run)
		for _, ns := range attached {
			if err := net.Teardown(context.Background(), ns); err != nil {
				progress("cni cleanup: %v", err)
			}
		}
		if err := net.Remove(); err != nil {
			progress("cni cleanup: %v", err)
		}
	}()
	var seq atomic.Int64
	start := func() error {
		name := fmt.Sprintf("bench-cni-%s-%d", run, seq.Add(1))
		a, err := net.Setup(ctx, cni.Pod{UID: name, Namespace: "bench", Name: name})
		if err != nil {
			return err
		}
		attached = append(attached, a.NetNS)
		net.Commit(a.NetNS)
		_, err = rawPodIn(ctx, be, name, run, a.NetNS)
		return err
	}
	if err := start(); err != nil { // warm-up: the bridge comes up with the first pod
		t.Fatal(err)
	}
	progress("raw + CNI: %d sequential pod starts", cfg.n)
	for range cfg.n {
		t0 := time.Now()
		if err := start(); err != nil {
			t.Fatal(err)
		}
		r.rawCNIStart = append(r.rawCNIStart, time.Since(t0))
	}
}
