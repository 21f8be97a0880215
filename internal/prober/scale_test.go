package prober

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestThousandProbesAreAThousandGoroutines: each probe is one long-lived
// worker goroutine, whatever its period; removing the pods ends them all.
func TestThousandProbesAreAThousandGoroutines(t *testing.T) {
	h := newHarness(t) // its fake status knows no pod: workers wait, probing nothing
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
	deadline := time.Now().Add(10 * time.Second)
	for n := workerGoroutines(); n != 1000; n = workerGoroutines() {
		if n > 1000 || time.Now().After(deadline) {
			t.Fatalf("1000 probes run in %d worker goroutines", n)
		}
		time.Sleep(10 * time.Millisecond) // goroutines not scheduled yet show only their wrapper
	}
	for _, p := range pods {
		h.m.RemovePod(p)
	}
	deadline = time.Now().Add(10 * time.Second)
	for workerGoroutines() > 0 || h.m.WorkerCount() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines and %d workers left after removing every pod", workerGoroutines(), h.m.WorkerCount())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// workerGoroutines counts the goroutines running a probe worker.
func workerGoroutines() int {
	buf := make([]byte, 64<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "prober.(*worker).run(")
}
