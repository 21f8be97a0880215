package runc

import (
	"slices"
	"testing"
)

// TestPodIndex: a pod's IDs come back until their records go, and a pod
// with none left is forgotten.
func TestPodIndex(t *testing.T) {
	x := newPodIndex()
	x.addSandbox("pod-a", "s1")
	x.addContainer("pod-a", "c1")
	x.addContainer("pod-a", "c2")
	x.addContainer("pod-b", "c3")
	sbs, ctrs := x.ids("pod-a")
	slices.Sort(ctrs)
	if !slices.Equal(sbs, []string{"s1"}) || !slices.Equal(ctrs, []string{"c1", "c2"}) {
		t.Fatalf("pod-a: %v %v", sbs, ctrs)
	}
	x.removeContainer("pod-a", "c1")
	x.removeContainer("pod-a", "c2")
	x.removeSandbox("pod-a", "s1")
	if sbs, ctrs := x.ids("pod-a"); sbs != nil || ctrs != nil || len(x.pods) != 1 {
		t.Errorf("after removal: %v %v, %d pods indexed; want pod-b only", sbs, ctrs, len(x.pods))
	}
	if _, ctrs := x.ids("pod-b"); !slices.Equal(ctrs, []string{"c3"}) {
		t.Errorf("pod-b: %v", ctrs)
	}
}
