package runtimetest

import (
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// testStopSignalLost checks the optional signal check against the kernel's
// rule: a signal to a PID namespace's init without a handler is dropped.
func (s *suite) testStopSignalLost(t *testing.T) {
	if !s.caps.SignalCheck {
		t.Skip("backend does not check signals")
	}
	sc := s.rt
	sb := s.sandbox(t, "signals")
	cases := []struct {
		name string
		cmd  []string
		lost bool
	}{
		{"plain", []string{"sh", "-c", "echo trapped; exec sleep 3600"}, true}, // sleep, no handler
		{"ignoring", []string{"sh", "-c", `trap "" TERM; echo trapped; while true; do sleep 1; done`}, true},
		{"handling", []string{"sh", "-c", `trap "exit 0" TERM; echo trapped; while true; do sleep 1; done`}, false},
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = s.container(t, sb, c.name, c.cmd...)
	}
	for i, c := range cases {
		s.waitTrapped(t, ids[i])
		if got := sc.StopSignalLost(ctxT(t, 30*time.Second), ids[i]); got != c.lost {
			t.Errorf("StopSignalLost(%s) = %v; want %v", c.name, got, c.lost)
		}
	}
	if err := s.rt.StopContainer(ctxT(t, time.Minute), ids[0], 0); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	s.waitState(t, ids[0], runtime.ContainerExited, 10*time.Second)
	if sc.StopSignalLost(ctxT(t, 30*time.Second), ids[0]) {
		t.Error("StopSignalLost of an exited container = true; want false")
	}
}
