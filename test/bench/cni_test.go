package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/podman"
)

// benchCNICIDR is the bench's own kubenet range, apart from the local clusters' 10.244.0.0/16.
const benchCNICIDR = "10.99.0.0/24"

// benchRawCNI starts the raw pods again on the network runlet gives them: a namespace of the pod's
// own, CNI ADD (runlet's kubenet: bridge, host-local), and the container joining it by path. Against
// raw's podman bridge, the difference is what the pod network costs a start.
func benchRawCNI(t *testing.T, ctx context.Context, cfg config, be *podman.Backend, run string, r *results) {
	net := benchNetwork(t, "bench-cni-"+run, benchCNICIDR)
	defer removeRaw(context.Background(), be.Client(), run)
	var seq atomic.Int64
	start := func() error {
		name := fmt.Sprintf("bench-cni-%s-%d", run, seq.Add(1))
		a, err := net.attach(ctx, name)
		if err != nil {
			return err
		}
		_, err = rawPodIn(ctx, be, name, run, a.NetNS)
		return err
	}
	r.rawCNIStart = timeStarts(t, cfg.n, "raw + CNI", start)
}

// timeStarts starts one pod to warm up (the bridge comes up with the
// first), then n more one after the other, timing each.
func timeStarts(t *testing.T, n int, what string, start func() error) []time.Duration {
	if err := start(); err != nil {
		t.Fatal(err)
	}
	progress("%s: %d sequential pod starts", what, n)
	var out []time.Duration
	for range n {
		t0 := time.Now()
		if err := start(); err != nil {
			t.Fatal(err)
		}
		out = append(out, time.Since(t0))
	}
	return out
}
