package runtimetest

import (
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// testOwner checks the owner filter: an instance for another owner neither
// lists nor inspects this owner's objects, nor this one another's.
func (s *suite) testOwner(t *testing.T) {
	other := s.open(t, s.owner+"-other")
	sb := s.sandbox(t, "owned")
	id := s.create(t, sb, runtime.ContainerConfig{Name: "c", Command: []string{"sleep", "3600"}})
	theirs := s.sandboxOn(t, other, s.owner+"-other", "theirs")
	t.Cleanup(func() { _ = other.RemoveSandbox(ctxT(t, time.Minute), theirs.ID) })

	sbs, ctrs, err := other.List(ctxT(t, 30*time.Second), runtime.ListFilter{})
	if err != nil {
		t.Fatalf("List by another owner: %v", err)
	}
	for _, l := range sbs {
		if l.ID == sb.ID {
			t.Errorf("another owner lists this owner's sandbox %+v", l)
		}
	}
	if findContainer(ctrs, id) != nil {
		t.Errorf("another owner lists this owner's container %s", id)
	}
	if sbs, ctrs, _ := other.List(ctxT(t, 30*time.Second), runtime.ListFilter{PodUID: sb.PodUID}); len(sbs)+len(ctrs) != 0 {
		t.Errorf("another owner's List of this owner's pod = %+v, %+v; want nothing", sbs, ctrs)
	}
	if _, err := other.InspectContainer(ctxT(t, 30*time.Second), id); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("another owner's InspectContainer = %v; want ErrNotFound", err)
	}
	for _, l := range mustListSandboxes(t, s) {
		if l.ID == theirs.ID {
			t.Errorf("this owner lists another owner's sandbox %+v", l)
		}
	}
}

// testRecovery checks what re-adoption after a restart rests on: a fresh
// instance over the same state lists every sandbox and container as the
// old one did, with the labels the core gave them, and acts on them.
func (s *suite) testRecovery(t *testing.T) {
	sb := s.sandbox(t, "recovery")
	created := s.create(t, sb, runtime.ContainerConfig{Name: "created", Command: []string{"sleep", "3600"}})
	running := s.container(t, sb, "running", "sleep", "3600")
	s.waitState(t, running, runtime.ContainerRunning, 10*time.Second)
	before := mustList(t, s)

	fresh := s.open(t, s.owner)
	sbs, ctrs, err := fresh.List(ctxT(t, 30*time.Second), runtime.ListFilter{})
	if err != nil {
		t.Fatalf("List on a fresh instance: %v", err)
	}
	s.checkListedSandbox(t, sbs, sb)
	for _, id := range []string{created, running} {
		got, want := findContainer(ctrs, id), findContainer(before, id)
		if got == nil || want == nil || !sameView(*got, *want) {
			t.Errorf("container %s: the fresh instance lists %+v, the old one %+v; want the same", id, got, want)
			continue
		}
		if !maps.Equal(got.Labels, want.Labels) {
			t.Errorf("container %s labels: fresh %v, old %v; want them unchanged", id, got.Labels, want.Labels)
		}
	}
	if err := fresh.StartContainer(ctxT(t, time.Minute), created); err != nil {
		t.Fatalf("StartContainer on a fresh instance: %v", err)
	}
	if err := fresh.StopContainer(ctxT(t, time.Minute), running, 0); err != nil {
		t.Fatalf("StopContainer on a fresh instance: %v", err)
	}
	s.waitState(t, created, runtime.ContainerRunning, 10*time.Second)
	s.waitState(t, running, runtime.ContainerExited, 10*time.Second)
}

// testExitHints checks that an exit hint tells the exit the listing then
// shows. A stream may end, as the contract allows (podman's did once in a
// unit run, half a second in): the check then runs again on a new stream,
// a few times.
func (s *suite) testExitHints(t *testing.T) {
	sb := s.sandbox(t, "hints")
	for try := 1; try <= 3; try++ {
		if s.exitHinted(t, sb, fmt.Sprintf("exit7-%d", try)) {
			return
		}
		t.Logf("the event stream closed before the exit hint (try %d)", try)
	}
	t.Fatal("the event stream closed before the exit hint three times")
}

// exitHinted runs a container that exits 7 and checks the hint of its exit;
// false: the stream closed first.
func (s *suite) exitHinted(t *testing.T, sb runtime.Sandbox, name string) bool {
	ctx := ctxT(t, 30*time.Second)
	ch, err := s.rt.Events(ctx)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	id := s.container(t, sb, name, "sh", "-c", "sleep 0.2; exit 7")
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return false
			}
			if ev.ContainerID != id || ev.Exit == nil {
				continue
			}
			c := s.waitState(t, id, runtime.ContainerExited, 10*time.Second)
			if ev.Exit.ExitCode != 7 || c.ExitCode != 7 || !ev.Exit.FinishedAt.Equal(c.FinishedAt) {
				t.Errorf("exit hint %+v, listed %d at %v; want exit 7 at the listed time", *ev.Exit, c.ExitCode, c.FinishedAt)
			}
			return true
		case <-ctx.Done():
			t.Fatal("no exit hint for the container within 30s")
		}
	}
}
