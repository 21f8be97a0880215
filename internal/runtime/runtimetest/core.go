package runtimetest

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

func (s *suite) testHost(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	if err := s.rt.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	info, err := s.rt.Info(ctx)
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	if info.RuntimeName == "" || info.OCIRuntime == "" || info.CgroupVersion == "" || info.OS == "" || info.Arch == "" {
		t.Errorf("Info is incomplete: %+v", info)
	}
	t.Logf("host: %+v", info)
}

func (s *suite) testImage(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	for _, p := range []runtime.PullPolicy{runtime.PullNever, runtime.PullIfNotPresent, runtime.PullAlways} {
		id, err := s.rt.EnsureImage(ctx, Image, p, nil)
		if err != nil || id == "" {
			t.Errorf("EnsureImage(%s, %s) = %q, %v; want an ID", Image, p, id, err)
		}
	}
	missing := "localhost/runlet/" + s.prefix + "-missing:latest"
	for _, p := range []runtime.PullPolicy{runtime.PullNever, runtime.PullIfNotPresent} {
		if _, err := s.rt.EnsureImage(ctx, missing, p, nil); !errors.Is(err, runtime.ErrImageNotFound) {
			t.Errorf("EnsureImage(%s, %s) error = %v; want ErrImageNotFound", missing, p, err)
		}
	}
	// .invalid never resolves: a pull that fails for want of a registry.
	unpullable := "registry.invalid/runlet/" + s.prefix + ":latest"
	_, err := s.rt.EnsureImage(ctx, unpullable, runtime.PullIfNotPresent, nil)
	if !errors.Is(err, runtime.ErrImageNotFound) {
		t.Errorf("EnsureImage(%s) error = %v; want ErrImageNotFound", unpullable, err)
	} else {
		t.Logf("pull error as reported: %v", err)
	}
}

func (s *suite) testSandbox(t *testing.T) {
	sb := s.sandbox(t, "sandbox")
	if sb.ID == "" || len(sb.IPs) == 0 {
		t.Fatalf("CreateSandbox = %+v; want an ID and an IP", sb)
	}
	s.checkListedSandbox(t, mustListSandboxes(t, s), sb)
}

// checkListedSandbox finds sb in a listing and checks what it says of it.
func (s *suite) checkListedSandbox(t *testing.T, sbs []runtime.Sandbox, sb runtime.Sandbox) {
	t.Helper()
	for _, l := range sbs {
		if l.ID != sb.ID {
			continue
		}
		if l.State != runtime.SandboxReady || l.PodUID != sb.PodUID || l.Namespace != Namespace || l.Name != sb.Name {
			t.Errorf("listed sandbox = %+v; want Ready with the pod's identity %+v", l, sb)
		}
		if len(l.IPs) == 0 || l.IPs[0] != sb.IPs[0] {
			t.Errorf("listed sandbox IPs = %v; want %v", l.IPs, sb.IPs)
		}
		if l.Labels["runtimetest.run"] != s.prefix {
			t.Errorf("listed sandbox labels = %v; want the caller's labels", l.Labels)
		}
		return
	}
	t.Fatalf("sandbox %s not listed", sb.ID)
}

func (s *suite) testLifecycle(t *testing.T) {
	sb := s.sandbox(t, "lifecycle")
	before := time.Now()
	id := s.container(t, sb, "sleeper", "sleep", "3600")
	c := s.waitState(t, id, runtime.ContainerRunning, 10*time.Second)
	want := map[string]string{
		runtime.LabelManaged: "true", runtime.LabelPodUID: sb.PodUID, runtime.LabelPodNamespace: Namespace,
		runtime.LabelPodName: sb.Name, runtime.LabelContainerName: "sleeper", runtime.LabelAttempt: "0",
	}
	for k, v := range want {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q; want %q", k, c.Labels[k], v)
		}
	}
	if c.PodUID != sb.PodUID || c.Name != "sleeper" || c.SandboxID != sb.ID || c.ImageID == "" {
		t.Errorf("listed container = %+v; want pod %s, name sleeper, sandbox %s, an image ID", c, sb.PodUID, sb.ID)
	}
	if c.StartedAt.Before(before.Add(-time.Second)) || c.StartedAt.After(time.Now()) {
		t.Errorf("StartedAt = %v; want between %v and now", c.StartedAt, before)
	}
	ic, err := s.rt.InspectContainer(ctxT(t, 30*time.Second), id)
	if err != nil || ic.State != runtime.ContainerRunning || !ic.StartedAt.Equal(c.StartedAt) {
		t.Errorf("InspectContainer = %+v, %v; want Running, StartedAt %v", ic, err, c.StartedAt)
	}
	for _, l := range mustList(t, s) {
		if l.SandboxID == sb.ID && l.ID != id {
			t.Errorf("List shows a container that is not runlet's: %+v", l)
		}
	}
	if err := s.rt.RemoveContainer(ctxT(t, 30*time.Second), id); err != nil {
		t.Fatalf("RemoveContainer: %v", err)
	}
	if _, ok := s.find(t, id); ok {
		t.Errorf("container %s still listed after RemoveContainer", id)
	}
	if _, err := s.rt.InspectContainer(ctxT(t, 30*time.Second), id); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("InspectContainer after remove: %v; want ErrNotFound", err)
	}
}

// mustList lists every container.
func mustList(t *testing.T, s *suite) []runtime.Container {
	t.Helper()
	_, cs, err := s.rt.List(ctxT(t, 30*time.Second), runtime.ListFilter{})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return cs
}

// mustListSandboxes lists every sandbox.
func mustListSandboxes(t *testing.T, s *suite) []runtime.Sandbox {
	t.Helper()
	sbs, _, err := s.rt.List(ctxT(t, 30*time.Second), runtime.ListFilter{})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return sbs
}

func (s *suite) testExitCode(t *testing.T) {
	sb := s.sandbox(t, "exitcode")
	id := s.container(t, sb, "exit3", "sh", "-c", "sleep 0.2; exit 3")
	c := s.waitState(t, id, runtime.ContainerExited, 10*time.Second)
	if c.ExitCode != 3 {
		t.Errorf("ExitCode = %d; want 3", c.ExitCode)
	}
	if c.StartedAt.IsZero() || c.FinishedAt.Before(c.StartedAt) {
		t.Errorf("StartedAt %v, FinishedAt %v; want started, then finished", c.StartedAt, c.FinishedAt)
	}
	if d := c.FinishedAt.Sub(c.StartedAt); d < 150*time.Millisecond || d > 5*time.Second {
		t.Errorf("ran %v; want about 200ms (full-precision times)", d)
	}
}

func (s *suite) testStopGrace(t *testing.T) {
	sb := s.sandbox(t, "stop")
	// PID 1 ignores SIGTERM: only the SIGKILL after the grace ends it.
	stubborn := s.container(t, sb, "stubborn", "sh", "-c", `trap "" TERM; echo trapped; while true; do sleep 1; done`)
	polite := s.container(t, sb, "polite", "sh", "-c", `trap "exit 0" TERM; echo trapped; while true; do sleep 0.1; done`)
	s.waitTrapped(t, stubborn)
	s.waitTrapped(t, polite)

	start := time.Now()
	if err := s.rt.StopContainer(ctxT(t, time.Minute), polite, 10*time.Second); err != nil {
		t.Fatalf("StopContainer(polite): %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a container that exits on SIGTERM took %v to stop", d)
	}
	if c := s.waitState(t, polite, runtime.ContainerExited, 5*time.Second); c.ExitCode != 0 {
		t.Errorf("polite ExitCode = %d; want 0", c.ExitCode)
	}

	const grace = 2 * time.Second
	start = time.Now()
	if err := s.rt.StopContainer(ctxT(t, time.Minute), stubborn, grace); err != nil {
		t.Fatalf("StopContainer(stubborn): %v", err)
	}
	d := time.Since(start)
	if d < grace-200*time.Millisecond || d > grace+5*time.Second {
		t.Errorf("stopping a container that ignores SIGTERM took %v; want about the grace %v", d, grace)
	}
	c := s.waitState(t, stubborn, runtime.ContainerExited, 5*time.Second)
	if c.ExitCode != 137 {
		t.Errorf("stubborn ExitCode = %d; want 137 (SIGKILL)", c.ExitCode)
	}
	t.Logf("stop with grace %v took %v", grace, d)
}

// testExecWhileStopping: a container winding down after SIGTERM still runs
// commands, as on the kubelet (its readiness probe must see it go unready).
func (s *suite) testExecWhileStopping(t *testing.T) {
	sb := s.sandbox(t, "stopping")
	id := s.container(t, sb, "slow", "sh", "-c", `trap "rm /tmp/ready; sleep 3; exit 0" TERM; touch /tmp/ready; echo trapped; sleep 3600 & wait`)
	s.waitTrapped(t, id)
	stopped := make(chan error, 1)
	go func() { stopped <- s.rt.StopContainer(ctxT(t, time.Minute), id, 30*time.Second) }()
	ctx := ctxT(t, time.Minute)
	for {
		code, err := s.rt.Exec(ctx, id, []string{"test", "-f", "/tmp/ready"}, runtime.StreamIO{Stdout: io.Discard, Stderr: io.Discard})
		if err != nil {
			t.Fatalf("exec in a container after SIGTERM: %v", err)
		}
		if code != 0 { // the TERM trap ran: the container is stopping, and exec works
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	if c := s.waitState(t, id, runtime.ContainerExited, 5*time.Second); c.ExitCode != 0 {
		t.Errorf("ExitCode = %d; want 0 from the TERM trap", c.ExitCode)
	}
}

func (s *suite) testEvents(t *testing.T) {
	sb := s.sandbox(t, "events")
	ctx := ctxT(t, 30*time.Second)
	ch, err := s.rt.Events(ctx)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	start := time.Now()
	id := s.container(t, sb, "short", "sh", "-c", "exit 0")
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("event stream closed")
			}
			if ev.Time.Before(start.Add(-2 * time.Second)) {
				t.Errorf("event older than the stream: %+v", ev)
			}
			if ev.ContainerID == id && ev.PodUID == sb.PodUID {
				t.Logf("first event for the container after %v: %+v", time.Since(start), ev)
				return
			}
		case <-ctx.Done():
			t.Fatal("no event for the container within 30s")
		}
	}
}

func (s *suite) testRemoveSandbox(t *testing.T) {
	sb := s.sandbox(t, "remove")
	s.container(t, sb, "a", "sleep", "3600")
	s.container(t, sb, "b", "sh", "-c", `trap "" TERM; sleep 3600`)
	start := time.Now()
	if err := s.rt.RemoveSandbox(ctxT(t, time.Minute), sb.ID); err != nil {
		t.Fatalf("RemoveSandbox: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("RemoveSandbox took %v; want no grace wait", d)
	}
	delete(s.pods, sb.PodUID)
	for _, c := range mustList(t, s) {
		if c.PodUID == sb.PodUID || c.SandboxID == sb.ID {
			t.Errorf("container left after RemoveSandbox: %+v", c)
		}
	}
	for _, l := range mustListSandboxes(t, s) {
		if l.ID == sb.ID || l.PodUID == sb.PodUID {
			t.Errorf("sandbox left after RemoveSandbox: %+v", l)
		}
	}
	t.Logf("RemoveSandbox with 2 running containers took %v", time.Since(start))
	// Nothing is left for ReleasePod to fail on, and a pod the backend never
	// saw is no error.
	for _, uid := range []string{sb.PodUID, newUID()} {
		if err := s.rt.ReleasePod(ctxT(t, time.Minute), uid); err != nil {
			t.Errorf("ReleasePod(%s) once its sandbox is gone: %v", uid, err)
		}
	}
}

// waitTrapped waits until the container's script says it has set its
// signal traps: a signal before that meets the shell's default (or, as
// PID 1, none), and a loaded machine can start a container's process well
// after the container reads as running.
func (s *suite) waitTrapped(t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var out bytes.Buffer
		if err := s.rt.Logs(ctxT(t, 10*time.Second), id, runtime.LogOptions{TailLines: -1}, &out, io.Discard); err == nil && strings.Contains(out.String(), "trapped") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("container %s did not set its traps within 20s", id)
}
