package status

import (
	"context"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/polltest"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// staticAndMirror are a static pod and its mirror pod as the API holds it,
// with a condition someone else set; their UIDs differ, as they do on a node.
func staticAndMirror() (static, mirror *v1.Pod) {
	static = podtest.New("etcd-n1", podtest.Namespace("kube-system"), podtest.UID("static-uid"))
	static.Annotations = map[string]string{podconfig.ConfigSourceAnnotation: podconfig.FileSource, podconfig.ConfigHashAnnotation: "h1"}
	mirror = static.DeepCopy()
	mirror.UID = "mirror-uid"
	mirror.Annotations = map[string]string{podconfig.ConfigMirrorAnnotation: "h1"}
	mirror.Status = v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{
		{Type: "example.com/gate", Status: v1.ConditionTrue},
		{Type: v1.PodReady, Status: v1.ConditionFalse},
	}}
	return static, mirror
}

// mirrorManager runs a status manager that writes to client, finding
// mirror pods in it by name, as runlet's mirror manager does.
func mirrorManager(t *testing.T, client *fake.Clientset) *Manager {
	get := func(ctx context.Context, p *v1.Pod) (*v1.Pod, bool) {
		cur, err := client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		return cur, err == nil
	}
	apiPods := func(p *v1.Pod) (*v1.Pod, bool) {
		cur, ok := get(context.Background(), p)
		return cur, ok && cur.UID == p.UID
	}
	mirrors := func(p *v1.Pod) (*v1.Pod, bool) {
		cur, ok := get(context.Background(), p)
		return cur, ok && podconfig.IsMirror(cur)
	}
	target := Target(apiPods, mirrors)
	m := NewManager(Config{Writer: APIWriter{Pods: client.CoreV1(), Current: target}, APIPods: target, Log: logtest.Discard()})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go m.Run(ctx)
	return m
}

func runningStatus() v1.PodStatus {
	return v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}},
		ContainerStatuses: []v1.ContainerStatus{{Name: "etcd", Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}}
}

// TestMirrorPodStatus: a static pod's status goes to its mirror pod, under
// the mirror's UID, and keeps the conditions others set on the mirror (the
// kubelet's mergePodStatus).
func TestMirrorPodStatus(t *testing.T) {
	static, mirror := staticAndMirror()
	client := fake.NewClientset(mirror)
	m := mirrorManager(t, client)
	m.SetPodStatus(static, runningStatus())

	var got *v1.Pod
	polltest.Eventually(t, 10*time.Second, "the mirror pod Running", func() bool {
		p, err := client.CoreV1().Pods(mirror.Namespace).Get(context.Background(), mirror.Name, metav1.GetOptions{})
		got = p
		return err == nil && p.Status.Phase == v1.PodRunning
	})
	if got.UID != mirror.UID {
		t.Errorf("mirror UID %s; want %s", got.UID, mirror.UID)
	}
	conds := map[v1.PodConditionType]v1.ConditionStatus{}
	for _, c := range got.Status.Conditions {
		conds[c.Type] = c.Status
	}
	if conds[v1.PodReady] != v1.ConditionTrue || conds["example.com/gate"] != v1.ConditionTrue || len(conds) != 2 {
		t.Errorf("mirror conditions %v; want runlet's Ready=True and the gate's True kept", conds)
	}
	if len(got.Status.ContainerStatuses) != 1 {
		t.Errorf("mirror container statuses %+v; want the static pod's", got.Status.ContainerStatuses)
	}
}

// TestMirrorPodStatusWaitsForMirror: a static pod's status set before its
// mirror pod exists reaches the mirror once it is created.
func TestMirrorPodStatusWaitsForMirror(t *testing.T) {
	static, mirror := staticAndMirror()
	client := fake.NewClientset()
	m := mirrorManager(t, client)
	m.SetPodStatus(static, runningStatus())
	time.Sleep(100 * time.Millisecond) // the first write finds no mirror
	if _, err := client.CoreV1().Pods(mirror.Namespace).Create(context.Background(), mirror, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	polltest.Eventually(t, 10*time.Second, "the mirror pod Running", func() bool {
		p, err := client.CoreV1().Pods(mirror.Namespace).Get(context.Background(), mirror.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == v1.PodRunning
	})
}

// TestMirrorPodTerminalPhaseNotFinal: a static pod whose manifest came back
// keeps its UID and runs again; its mirror pod, terminal from the earlier
// run, is written Running again (an API pod's terminal phase stays).
func TestMirrorPodTerminalPhaseNotFinal(t *testing.T) {
	static, mirror := staticAndMirror()
	mirror.Status.Phase = v1.PodSucceeded
	client := fake.NewClientset(mirror)
	m := mirrorManager(t, client)
	m.SetPodStatus(static, runningStatus())
	polltest.Eventually(t, 10*time.Second, "the mirror pod Running again", func() bool {
		p, err := client.CoreV1().Pods(mirror.Namespace).Get(context.Background(), mirror.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == v1.PodRunning
	})
}
