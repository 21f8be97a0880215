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
	idx := s.container(t, a, "x", "sh", "-c", "exit 3")
	s.container(t, b, "b", "sleep", "3600")
	s.waitState(t, ida, runtime.ContainerRunning, 30*time.Second)
	s.waitState(t, idx, runtime.ContainerExited, 30*time.Second)
	sbs, ctrs, err := l.ListPod(ctxT(t, 30*time.Second), a.PodUID)
	if err != nil {
		t.Fatalf("ListPod: %v", err)
	}
	if len(sbs) != 1 {
		t.Fatalf("ListPod(%s) sandboxes = %+v; want pod a's alone", a.PodUID, sbs)
	}
	s.checkListedSandbox(t, sbs, a)
	all, err := s.rt.ListContainers(ctxT(t, 30*time.Second))
	if err != nil {
		t.Fatalf("ListContainers: %v", err)
	}
	for _, id := range []string{ida, idx} {
		if got, want := findContainer(ctrs, id), findContainer(all, id); got == nil || want == nil || !sameView(*got, *want) {
			t.Errorf("container %s: ListPod shows %+v, the full listing %+v; want the same", id, got, want)
		}
	}
	if len(ctrs) != 2 {
		t.Errorf("ListPod(%s) containers = %+v; want pod a's two alone", a.PodUID, ctrs)
	}
	sbs, ctrs, err = l.ListPod(ctxT(t, 30*time.Second), newUID())
	if err != nil || len(sbs)+len(ctrs) != 0 {
		t.Errorf("ListPod(unknown) = %+v, %+v, %v; want nothing", sbs, ctrs, err)
	}
}

func findContainer(ctrs []runtime.Container, id string) *runtime.Container {
	for i := range ctrs {
		if ctrs[i].ID == id {
			return &ctrs[i]
		}
	}
	return nil
}

// sameView compares what the PLEG and the status read of a container.
func sameView(a, b runtime.Container) bool {
	return a.Name == b.Name && a.SandboxID == b.SandboxID && a.PodUID == b.PodUID && a.State == b.State &&
		a.ExitCode == b.ExitCode && a.Attempt == b.Attempt && a.StartedAt.Equal(b.StartedAt) &&
		a.FinishedAt.Equal(b.FinishedAt) && a.OOMKilled == b.OOMKilled && a.ImageID == b.ImageID
}
