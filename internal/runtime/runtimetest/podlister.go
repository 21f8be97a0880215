package runtimetest

import (
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// testListPod checks the optional single-pod listing: exactly one pod's
// objects, in the same shape a full listing gives them.
func (s *suite) testListPod(t *testing.T) {
	l, ok := s.rt.(runtime.PodLister)
	if !ok {
		t.Skip("backend does not list single pods")
	}
	a, b := s.sandbox(t, "list-a"), s.sandbox(t, "list-b")
	ida := s.container(t, a, "a", "sleep", "3600")
	s.container(t, b, "b", "sleep", "3600")
	s.waitState(t, ida, runtime.ContainerRunning, 30*time.Second)
	sbs, ctrs, err := l.ListPod(ctxT(t, 30*time.Second), a.PodUID)
	if err != nil {
		t.Fatalf("ListPod: %v", err)
	}
	if len(sbs) != 1 {
		t.Fatalf("ListPod(%s) sandboxes = %+v; want pod a's alone", a.PodUID, sbs)
	}
	s.checkListedSandbox(t, sbs, a)
	if len(ctrs) != 1 || ctrs[0].ID != ida || ctrs[0].State != runtime.ContainerRunning || ctrs[0].Name != "a" {
		t.Errorf("ListPod(%s) containers = %+v; want container a, running", a.PodUID, ctrs)
	}
	sbs, ctrs, err = l.ListPod(ctxT(t, 30*time.Second), newUID())
	if err != nil || len(sbs)+len(ctrs) != 0 {
		t.Errorf("ListPod(unknown) = %+v, %+v, %v; want nothing", sbs, ctrs, err)
	}
}
