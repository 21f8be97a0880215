package kubelet

import (
	"context"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/polltest"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

const nodeName = "n1"

// informer is the node's pod informer as a fixed cache.
type informer struct{ idx cache.Indexer }

func (i informer) Lister() corev1listers.PodLister                  { return corev1listers.NewPodLister(i.idx) }
func (i informer) Synced() bool                                     { return true }
func (i informer) AddEventHandler(cache.ResourceEventHandler) error { return nil }

// testConfig is a core that relists the backend often, so that tests
// see the pods' changes soon.
func testConfig(t *testing.T) Config {
	return Config{NodeName: nodeName, NodeIP: "127.0.0.1", RootDir: t.TempDir(), MaxPods: 10,
		PLEGRelistPeriod: 100 * time.Millisecond, ImagePullTimeout: time.Minute}
}

// TestNodeRunsAPod builds a whole node in-process, on the fake backend and
// a fake API, and runs one pod through the api source to Running.
func TestNodeRunsAPod(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pod := podtest.New("web", podtest.Namespace("ns"), podtest.UID("u1"), podtest.NodeName(nodeName),
		podtest.Containers(v1.Container{Name: "c", Image: "img:1"}))
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}
	client := fake.NewClientset(node, pod)
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := idx.Add(pod); err != nil {
		t.Fatal(err)
	}
	backend := runtimefake.New()
	k := newTestCore(ctx, t, testConfig(t), client, node, informer{idx}, backend, nil)
	k.Start(ctx)
	k.Source().Add(pod)

	polltest.Eventually(t, 10*time.Second, "a sandbox and a running container on the backend", func() bool {
		ctrs := backend.Containers()
		return len(backend.Sandboxes()) == 1 && len(ctrs) == 1 && ctrs[0].State == runtime.ContainerRunning
	})
	polltest.Eventually(t, 10*time.Second, "the status manager reports Running", func() bool {
		st, ok := k.Status().GetPod(pod.UID)
		return ok && st.Status.Phase == v1.PodRunning
	})
	if got, ok := k.GetPodByName("ns", "web"); !ok || got.Status.Phase != v1.PodRunning {
		t.Errorf("GetPodByName = %v, %v; want the pod, Running", got, ok)
	}
	if running := k.RunningContainers(); len(running) != 1 {
		t.Errorf("RunningContainers = %v; want one", running)
	}
}
