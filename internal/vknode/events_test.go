package vknode

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// TestWarningsOnly: the pod controller's failures reach the API, its
// successes do not, whichever of the recorder's methods it calls.
func TestWarningsOnly(t *testing.T) {
	fake := record.NewFakeRecorder(10)
	r := warningsOnly{fake}
	pod := &v1.Pod{}
	r.Event(pod, v1.EventTypeNormal, "ProviderCreateSuccess", "ok")
	r.Eventf(pod, v1.EventTypeNormal, "ProviderDeleteSuccess", "%s", "ok")
	r.AnnotatedEventf(pod, nil, v1.EventTypeNormal, "ProviderUpdateSuccess", "%s", "ok")
	r.Event(pod, v1.EventTypeWarning, "ProviderCreateFailed", "no")
	r.Eventf(pod, v1.EventTypeWarning, "ProviderDeleteFailed", "%s", "no")
	r.AnnotatedEventf(pod, nil, v1.EventTypeWarning, "ProviderUpdateFailed", "%s", "no")
	close(fake.Events)
	var got []string
	for e := range fake.Events {
		got = append(got, e)
	}
	want := []string{"Warning ProviderCreateFailed no", "Warning ProviderDeleteFailed no", "Warning ProviderUpdateFailed no"}
	if len(got) != len(want) {
		t.Fatalf("events %q; want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: %q; want %q", i, got[i], want[i])
		}
	}
}
