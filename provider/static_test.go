package provider

import (
	"context"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeStatic records the statuses routed to mirror pods.
type fakeStatic struct {
	statuses chan *v1.Pod
}

func (f *fakeStatic) UpdateStatus(p *v1.Pod) { f.statuses <- p }

func TestStaticStatusGoesToMirrorManager(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFixture(t)
	fs := &fakeStatic{statuses: make(chan *v1.Pod, 10)}
	f.p.cfg.Static = fs
	framework := make(chan string, 10)
	f.p.NotifyPods(ctx, func(p *v1.Pod) { framework <- p.Name })
	go f.status.Run(ctx)
	static := ppod("static", "us")
	static.Annotations = map[string]string{podconfig.ConfigSourceAnnotation: podconfig.FileSource}
	f.status.SetPodStatus(static, v1.PodStatus{Phase: v1.PodRunning})
	select {
	case p := <-fs.statuses:
		if p.UID != "us" || p.Status.Phase != v1.PodRunning {
			t.Errorf("routed %s with phase %s", p.UID, p.Status.Phase)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the static pod's status never reached the mirror manager")
	}
	select {
	case name := <-framework:
		t.Errorf("the framework was notified of %s: it would write a foreign UID", name)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestDeleteMirrorPodKeepsStaticPod: deleting a mirror pod in the API must
// not reach the api source (nor stop anything): it is only recreated.
func TestDeleteMirrorPodKeepsStaticPod(t *testing.T) {
	mirror := ppod("web-n1", "mirror-uid")
	mirror.Annotations = map[string]string{podconfig.ConfigMirrorAnnotation: "hash"}
	now := metav1.Now()
	mirror.DeletionTimestamp = &now
	f := newFixture(t, mirror)
	if err := f.p.DeletePod(context.Background(), mirror); err != nil {
		t.Fatalf("DeletePod(mirror) = %v", err)
	}
	if got := f.source.Pods(); len(got) != 0 {
		t.Errorf("the api source now holds %v", got)
	}
}
