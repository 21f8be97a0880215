package status

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/runlet/runlet/internal/podtest"
)

func rpod(uid string) *v1.Pod {
	return podtest.New(uid, podtest.Namespace("ns"), podtest.UID(uid))
}

func TestReconcileResendsOnlyWhatDiffers(t *testing.T) {
	m := NewManager(Config{Writer: nopWriter{}})
	started := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 123456789, time.UTC))
	running := v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{
		Name: "c", Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: started}}}},
		Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}}
	for _, uid := range []string{"same", "stale", "gone", "final"} {
		m.SetPodStatus(rpod(uid), *running.DeepCopy())
	}
	m.drain() // as if written

	inAPI := map[types.UID]*v1.PodStatus{}
	for uid, p := range m.statuses {
		inAPI[uid] = normalized(&p.Status) // what a round trip through the API leaves
	}
	inAPI["same"].Conditions = append(inAPI["same"].Conditions, v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue})
	inAPI["stale"].Phase = v1.PodPending
	delete(inAPI, "gone")
	inAPI["final"].Phase = v1.PodSucceeded

	n := m.Reconcile(func(p *v1.Pod) (*v1.Pod, bool) {
		st, ok := inAPI[p.UID]
		if !ok {
			return nil, false
		}
		cur := rpod(string(p.UID))
		cur.Status = *st
		return cur, true
	})
	if n != 1 {
		t.Fatalf("Reconcile queued %d statuses; want 1", n)
	}
	got := m.drain()
	if len(got) != 1 || got[0].UID != "stale" {
		t.Fatalf("queued %v; want the stale pod only", got)
	}
}
