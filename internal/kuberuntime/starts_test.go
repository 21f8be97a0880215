package kuberuntime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// gatedSandboxes holds every CreateSandbox until released, counting how many
// wait at once.
type gatedSandboxes struct {
	*runtimefake.Fake
	mu            sync.Mutex
	inFlight, max int
	release       chan struct{}
}

func (g *gatedSandboxes) CreateSandbox(ctx context.Context, cfg runtime.SandboxConfig) (runtime.Sandbox, error) {
	g.mu.Lock()
	g.inFlight++
	g.max = max(g.max, g.inFlight)
	g.mu.Unlock()
	<-g.release
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	return g.Fake.CreateSandbox(ctx, cfg)
}

// Capabilities bounds the parallel starts, as a backend's do.
func (g *gatedSandboxes) Capabilities() runtime.Capabilities {
	c := g.Fake.Capabilities()
	c.ParallelStarts = testParallelStarts
	return c
}

func TestPodStartsAreBounded(t *testing.T) {
	log := logtest.Discard()
	g := &gatedSandboxes{Fake: runtimefake.New(), release: make(chan struct{})}
	m := NewManager(Config{Runtime: g, Recorder: record.NewFakeRecorder(1000), RuntimeName: "podman", Owner: "node-1", Log: log,
		Dirs: poddir.New(t.TempDir())})
	const pods = 3 * testParallelStarts
	var wg sync.WaitGroup
	for i := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pod := newPod(v1.RestartPolicyAlways, "c")
			pod.UID, pod.Name = types.UID(fmt.Sprintf("uid-%d", i)), fmt.Sprintf("p%d", i)
			if _, err := m.SyncPod(context.Background(), pod, &runtime.PodStatus{UID: string(pod.UID)}); err != nil {
				t.Error(err)
			}
		}()
	}
	inFlight := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.inFlight
	}
	deadline := time.Now().Add(10 * time.Second)
	for inFlight() < testParallelStarts && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // room for a fifth start, were it allowed
	if n := inFlight(); n != testParallelStarts {
		t.Errorf("%d pod starts under way with %d pods waiting; want %d", n, pods, testParallelStarts)
	}
	for range pods {
		g.release <- struct{}{}
	}
	wg.Wait()
	if g.max > testParallelStarts {
		t.Errorf("%d sandboxes created at once; want at most %d", g.max, testParallelStarts)
	}
	if n := len(g.Sandboxes()); n != pods {
		t.Errorf("%d sandboxes; want %d", n, pods)
	}
}
