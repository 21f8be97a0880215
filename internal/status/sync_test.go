package status

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/polltest"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

type recordingDeleter struct {
	mu      sync.Mutex
	fails   int
	got     []*v1.Pod
	written []*v1.Pod
	calls   chan struct{}
}

func (d *recordingDeleter) WriteStatus(_ context.Context, pod *v1.Pod) error {
	d.mu.Lock()
	defer func() { d.mu.Unlock(); d.calls <- struct{}{} }()
	d.written = append(d.written, pod)
	return nil
}

func (d *recordingDeleter) DeletePod(_ context.Context, pod *v1.Pod) error {
	d.mu.Lock()
	defer func() { d.mu.Unlock(); d.calls <- struct{}{} }()
	if d.fails > 0 {
		d.fails--
		return errors.New("apiserver away")
	}
	d.got = append(d.got, pod)
	return nil
}

func deletedPod() *v1.Pod {
	p := testPod(v1.RestartPolicyAlways, "c")
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}

// TestFinalDeleteAfterTermination: a deleted pod that finished terminating
// is handed to the deleter with its terminal status, after a failure too;
// a pod without a deletion timestamp is never deleted.
func TestFinalDeleteAfterTermination(t *testing.T) {
	d := &recordingDeleter{fails: 1, calls: make(chan struct{}, 10)}
	m := NewManager(Config{Writer: d, Log: logtest.Discard()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)

	kept := testPod(v1.RestartPolicyNever, "c")
	kept.UID = "kept"
	m.SetPodStatus(kept, v1.PodStatus{Phase: v1.PodSucceeded})
	m.PodTerminated(kept)

	pod := deletedPod()
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodFailed})
	m.PodTerminated(pod)
	// kept's write, the failed delete, then its retry a second later
	polltest.Eventually(t, 10*time.Second, "the deleted pod deleted", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.got) > 0
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.got) != 1 || d.got[0].UID != pod.UID || d.got[0].Status.Phase != v1.PodFailed {
		t.Fatalf("deleted %+v; want the deleted pod once, with its terminal status", d.got)
	}
}

// TestFinalDeleteWaitsForTheList: a pod that finished terminating while
// the node's pods were not listed yet (runlet started without an
// apiserver, from its checkpoint) is deleted once they are, not taken for
// gone because the informer does not hold it yet.
func TestFinalDeleteWaitsForTheList(t *testing.T) {
	pod := deletedPod()
	client := fake.NewClientset(pod.DeepCopy())
	var listed atomic.Bool
	w := apiWriter(client)
	current := w.Current
	w.Current = func(p *v1.Pod) (*v1.Pod, bool) {
		if !listed.Load() {
			return nil, false
		}
		return current(p)
	}
	w.Synced = listed.Load
	m := NewManager(Config{Writer: w, Log: logtest.Discard()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodFailed})
	m.PodTerminated(pod)
	if !m.syncAPI(ctx, pod.UID, true) {
		t.Fatal("a delete before the list is not tried again")
	}
	listed.Store(true)
	polltest.Eventually(t, 10*time.Second, "the pod deleted once the node's pods are listed", func() bool {
		_, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		return err != nil
	})
}

// TestFinalDeleteNeedsTerminalPhase: the kubelet deletes only a pod whose
// status is terminal.
func TestFinalDeleteNeedsTerminalPhase(t *testing.T) {
	d := &recordingDeleter{calls: make(chan struct{}, 10)}
	m := NewManager(Config{Writer: d, Log: logtest.Discard()})
	pod := deletedPod()
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning})
	m.syncAPI(context.Background(), pod.UID, true)
	if len(d.calls) != 0 {
		t.Fatal("a pod without a terminal phase was deleted")
	}
}

// TestStatusWrittenOnce: changes made before the writer gets to a pod are
// written once, as they are now, terminal pods' too.
func TestStatusWrittenOnce(t *testing.T) {
	d := &recordingDeleter{calls: make(chan struct{}, 10)}
	m := NewManager(Config{Writer: d, Log: logtest.Discard()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pod := testPod(v1.RestartPolicyAlways, "c")
	running := v1.ContainerStatus{Name: "c", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
	stopped := v1.ContainerStatus{Name: "c", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 143}}}
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running}})
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodFailed, Reason: "DeadlineExceeded", ContainerStatuses: []v1.ContainerStatus{running}})
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodFailed, Reason: "DeadlineExceeded", ContainerStatuses: []v1.ContainerStatus{stopped}})
	go m.Run(ctx)
	select {
	case <-d.calls:
	case <-time.After(10 * time.Second):
		t.Fatal("status not written")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.written) != 1 || d.written[0].Status.ContainerStatuses[0].State.Terminated == nil {
		t.Fatalf("written %+v; want the status with the container stopped, once", d.written)
	}
}

// TestAPIPodDeleter: the terminal status goes to the API, then the delete
// with grace 0 and the UID precondition; a pod of the same name but another
// UID is left alone.
func TestAPIPodDeleter(t *testing.T) {
	pod := deletedPod()
	inAPI := pod.DeepCopy()
	inAPI.Status = v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: "example.com/gate", Status: v1.ConditionTrue}}}
	client := fake.NewClientset(inAPI)
	final := pod.DeepCopy()
	final.Status = v1.PodStatus{Phase: v1.PodSucceeded, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}}

	var patch []byte
	var opts metav1.DeleteOptions
	client.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			patch = a.(k8stesting.PatchAction).GetPatch()
		}
		return false, nil, nil
	})
	client.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts = a.(k8stesting.DeleteActionImpl).DeleteOptions
		return false, nil, nil
	})
	if err := apiWriter(client).DeletePod(context.Background(), final); err != nil {
		t.Fatal(err)
	}
	written := patched(t, inAPI, patch)
	if written.Status.Phase != v1.PodSucceeded || len(written.Status.Conditions) != 2 {
		t.Errorf("status written = %+v; want the final status, the API's own condition kept", written)
	}
	if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 || opts.Preconditions == nil ||
		opts.Preconditions.UID == nil || *opts.Preconditions.UID != pod.UID {
		t.Errorf("delete options %+v; want grace 0 and the UID precondition", opts)
	}
	if _, err := client.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{}); err == nil {
		t.Error("pod still in the API")
	}

	other := inAPI.DeepCopy()
	other.UID = "another"
	client = fake.NewClientset(other)
	if err := apiWriter(client).DeletePod(context.Background(), final); !errors.Is(err, ErrPodGone) {
		t.Errorf("err = %v; want ErrPodGone for a pod with another UID", err)
	}
	if _, err := client.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the other pod was deleted: %v", err)
	}
}

// TestAPIWriterKeepsTerminalPhase: a terminal phase in the API stays, the
// container states are updated.
func TestAPIWriterKeepsTerminalPhase(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "c")
	inAPI := pod.DeepCopy()
	inAPI.Status = v1.PodStatus{Phase: v1.PodFailed, Reason: "DeadlineExceeded",
		ContainerStatuses: []v1.ContainerStatus{{Name: "c", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}}
	client := fake.NewClientset(inAPI)
	ours := pod.DeepCopy()
	ours.Status = v1.PodStatus{Phase: v1.PodSucceeded,
		ContainerStatuses: []v1.ContainerStatus{{Name: "c", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}}}}
	if err := apiWriter(client).WriteStatus(context.Background(), ours); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1.PodFailed || got.Status.Reason != "DeadlineExceeded" || got.Status.ContainerStatuses[0].State.Terminated == nil {
		t.Errorf("status %s %q %+v; want Failed DeadlineExceeded with the container terminated",
			got.Status.Phase, got.Status.Reason, got.Status.ContainerStatuses[0].State)
	}
}

// apiWriter is the writer over a fake API, whose pods stand in for the
// node's pod informer.
func apiWriter(client *fake.Clientset) APIWriter {
	return APIWriter{Pods: client.CoreV1(), Current: func(pod *v1.Pod) (*v1.Pod, bool) {
		cur, err := client.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
		return cur, err == nil && cur.UID == pod.UID
	}}
}

// patched is pod with a status patch applied, as the apiserver applies it.
func patched(t *testing.T, pod *v1.Pod, patch []byte) *v1.Pod {
	t.Helper()
	orig, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	b, err := strategicpatch.StrategicMergePatch(orig, patch, v1.Pod{})
	if err != nil {
		t.Fatalf("status patch %s: %v", patch, err)
	}
	out := &v1.Pod{}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}
