package prober

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestThousandProbesAreAThousandGoroutines: each probe is one long-lived
// worker goroutine, whatever its period; removing the pods ends them all.
func TestThousandProbesAreAThousandGoroutines(t *testing.T) {
	h := newHarness(t) // its fake status knows no pod: workers wait, probing nothing
	before := runtime.NumGoroutine()
	var pods []*v1.Pod
	for i := range 500 {
		c := v1.Container{Name: "c", ReadinessProbe: execSpec(1), LivenessProbe: execSpec(1)}
		p := probePod(c)
		p.UID = types.UID("uid-" + strconv.Itoa(i))
		pods = append(pods, p)
		h.m.AddPod(p)
	}
	if n := h.m.WorkerCount(); n != 1000 {
		t.Fatalf("%d workers for 1000 probes", n)
	}
	if d := runtime.NumGoroutine() - before; d != 1000 {
		t.Fatalf("1000 probes cost %d goroutines", d)
	}
	for _, p := range pods {
		h.m.RemovePod(p)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before || h.m.WorkerCount() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines and %d workers left after removing every pod", runtime.NumGoroutine()-before, h.m.WorkerCount())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
