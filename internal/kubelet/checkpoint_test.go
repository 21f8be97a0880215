package kubelet

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/apisource"
	"github.com/runlet/runlet/internal/checkpoint"
	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/polltest"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// lateInformer is the node's pod informer of an apiserver that has not
// answered yet: it has listed nothing until answer.
type lateInformer struct {
	informer
	synced atomic.Bool
}

func (i *lateInformer) Synced() bool { return i.synced.Load() }

// TestOfflineStartAfterReboot runs a pod on a core with a checkpoint, then
// "reboots": a new core on an empty backend, whose apiserver does not
// answer. The pod runs again from the checkpoint alone, its restart
// counted; once the API answers with the same pod, its container stays.
func TestOfflineStartAfterReboot(t *testing.T) {
	cfg := testConfig(t)
	cfg.OfflineStartAfter = time.Millisecond
	pod := podtest.New("web", podtest.Namespace("ns"), podtest.UID("u1"), podtest.NodeName(nodeName),
		podtest.Containers(v1.Container{Name: "c", Image: "img:1"}))
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}
	client := fake.NewClientset(node, pod)
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := idx.Add(pod); err != nil {
		t.Fatal(err)
	}

	// Before the reboot: the pod runs, and its Running status is kept.
	cp := openTestCheckpoint(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	before := newTestCore(ctx, t, cfg, client, node, informer{idx}, runtimefake.New(), cp)
	before.Start(ctx)
	polltest.Eventually(t, 10*time.Second, "the pod checkpointed Running", func() bool {
		cp.Flush()
		pods := openTestCheckpoint(t, cfg).Pods()
		return len(pods) == 1 && pods[0].Status.Phase == v1.PodRunning
	})
	cancel()

	// After it: nothing runs, and the apiserver does not answer.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	backend, api := runtimefake.New(), &lateInformer{informer: informer{idx}}
	after := newTestCore(ctx, t, cfg, client, node, api, backend, openTestCheckpoint(t, cfg))
	after.Start(ctx)
	var running string
	polltest.Eventually(t, 10*time.Second, "the pod Running again offline, its restart counted", func() bool {
		st, ok := after.Status().GetPod(pod.UID)
		ctrs := backend.Containers()
		if !ok || st.Status.Phase != v1.PodRunning || len(ctrs) != 1 || ctrs[0].State != runtime.ContainerRunning {
			return false
		}
		running = ctrs[0].ID
		return st.Status.ContainerStatuses[0].RestartCount == 1
	})

	api.synced.Store(true) // the apiserver answers, with the pod unchanged
	polltest.Eventually(t, 10*time.Second, "the API's pod taken on", func() bool {
		_, ok := after.GetPodByName("ns", "web")
		return ok && !after.checkpoint.Offline()
	})
	ctrs := backend.Containers()
	st, _ := after.Status().GetPod(pod.UID)
	if len(ctrs) != 1 || ctrs[0].ID != running || st.Status.ContainerStatuses[0].RestartCount != 1 {
		t.Errorf("after the reconnect: containers %+v, restarts %d; want %s still running, 1 restart", ctrs,
			st.Status.ContainerStatuses[0].RestartCount, running)
	}
}

func openTestCheckpoint(t *testing.T, cfg Config) *checkpoint.Store {
	cp, err := checkpoint.Open(CheckpointDir(cfg.RootDir), logtest.Discard())
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// newTestCore is a core on the fake backend and a fake API, with a checkpoint.
func newTestCore(ctx context.Context, t *testing.T, cfg Config, client *fake.Clientset, node *v1.Node,
	pods apisource.Informer, backend *runtimefake.Fake, cp *checkpoint.Store) *Kubelet {
	t.Helper()
	k, err := New(ctx, cfg, Deps{Client: client, Events: client.CoreV1(), Backend: backend, Host: runtime.HostInfo{RuntimeName: "fake"},
		Recorder: &record.FakeRecorder{}, Log: logrus.NewEntry(logtest.Discard()), Node: node, Pods: pods, Checkpoint: cp})
	if err != nil {
		t.Fatal(err)
	}
	return k
}
