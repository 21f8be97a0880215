package runtimetest

import (
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// testListPod checks the single-pod listing: exactly one pod's objects, in
// the same shape a full listing gives them.
func (s *suite) testListPod(t *testing.T) {
	a, b := s.sandbox(t, "list-a"), s.sandbox(t, "list-b")
	ida := s.container(t, a, "a", "sleep", "3600")
	s.container(t, b, "b", "sleep", "3600")
	s.waitState(t, ida, runtime.ContainerRunning, 30*time.Second)
	// x has ended, where the backend runs processes, or was only created.
	var idx string
	if s.caps.Processes {
		idx = s.container(t, a, "x", "sh", "-c", "exit 3")
		s.waitState(t, idx, runtime.ContainerExited, 30*time.Second)
	} else {
		idx = s.create(t, a, runtime.ContainerConfig{Name: "x", Command: []string{"sh", "-c", "exit 3"}})
	}
	sbs, ctrs, err := s.rt.List(ctxT(t, 30*time.Second), runtime.ListFilter{PodUID: a.PodUID})
	if err != nil {
		t.Fatalf("List of pod %s: %v", a.PodUID, err)
	}
	if len(sbs) != 1 {
		t.Fatalf("List of pod %s sandboxes = %+v; want pod a's alone", a.PodUID, sbs)
	}
	s.checkListedSandbox(t, sbs, a)
	all := mustList(t, s)
	for _, id := range []string{ida, idx} {
		if got, want := findContainer(ctrs, id), findContainer(all, id); got == nil || want == nil || !sameView(*got, *want) {
			t.Errorf("container %s: the pod's list shows %+v, the full listing %+v; want the same", id, got, want)
		}
	}
	if len(ctrs) != 2 {
		t.Errorf("List of pod %s containers = %+v; want pod a's two alone", a.PodUID, ctrs)
	}
	sbs, ctrs, err = s.rt.List(ctxT(t, 30*time.Second), runtime.ListFilter{PodUID: newUID()})
	if err != nil || len(sbs)+len(ctrs) != 0 {
		t.Errorf("List of an unknown pod = %+v, %+v, %v; want nothing", sbs, ctrs, err)
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
