package pleg

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// gatedFake holds a full relist's list, already taken, until the test lets
// it return: the window in which a pod refresh overtakes it.
type gatedFake struct {
	*timedFake
	taken, release chan struct{}
}

func (f *gatedFake) List(ctx context.Context, flt runtime.ListFilter) ([]runtime.Sandbox, []runtime.Container, error) {
	sbs, ctrs, err := f.timedFake.List(ctx, flt)
	if flt.PodUID == "" && f.taken != nil {
		close(f.taken)
		<-f.release
	}
	return sbs, ctrs, err
}

func runningPod(t *testing.T, f *timedFake, uid string) string {
	t.Helper()
	ctx := context.Background()
	sb, err := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: uid})
	if err != nil {
		t.Fatal(err)
	}
	id, err := f.CreateContainer(ctx, sb.ID, runtime.ContainerConfig{Name: "c", Image: "i"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestRelistPodTouchesOnlyThatPod(t *testing.T) {
	ctx := context.Background()
	f, p, c := setup(t)
	a, b := runningPod(t, f, "a"), runningPod(t, f, "b")
	p.Relist(ctx)
	drain(p)
	_ = f.Exit(a, 1)
	_ = f.Exit(b, 1)
	before := time.Now()
	p.relistPod(ctx, "a")
	if got := fmt.Sprint(drain(p)); got != "[a:ContainerDied]" {
		t.Errorf("events %s; want [a:ContainerDied] only", got)
	}
	if ps := c.Get("a"); !ps.Timestamp.After(before) || ps.Containers[0].State != runtime.ContainerExited {
		t.Errorf("pod a = %+v; want its exited container, stamped after %v", ps, before)
	}
	if ps := c.Get("b"); ps.Containers[0].State != runtime.ContainerRunning {
		t.Errorf("pod b = %+v; want the relist's view (running) until b is refreshed", ps)
	}
	p.Relist(ctx)
	if got := fmt.Sprint(drain(p)); got != "[b:ContainerDied]" {
		t.Errorf("events after the relist %s; want [b:ContainerDied] (a already reported)", got)
	}
}

// TestSlowRelistKeepsNewerPodView: a full relist that listed before a pod
// refresh must neither roll the pod back nor report a transition backwards.
func TestSlowRelistKeepsNewerPodView(t *testing.T) {
	ctx := context.Background()
	tf, _, c := setup(t)
	f := &gatedFake{timedFake: tf}
	p := New(f, c, time.Hour, quietLog())
	id := runningPod(t, tf, "u")
	p.Relist(ctx)
	drain(p)

	f.taken, f.release = make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() { p.Relist(ctx); close(done) }()
	<-f.taken // the relist now holds a view with the container running
	_ = tf.Exit(id, 1)
	p.relistPod(ctx, "u")
	close(f.release)
	<-done
	if got := fmt.Sprint(drain(p)); got != "[u:ContainerDied]" {
		t.Errorf("events %s; want [u:ContainerDied] alone", got)
	}
	if cur, _ := c.Get("u").Latest("c"); cur == nil || cur.State != runtime.ContainerExited {
		t.Errorf("cache = %+v; want the refresh's exited container", c.Get("u"))
	}
}

func TestRefreshOfAGonePod(t *testing.T) {
	ctx := context.Background()
	f, p, c := setup(t)
	id := runningPod(t, f, "u")
	p.Relist(ctx)
	drain(p)
	_ = f.Exit(id, 0)
	_ = f.RemoveContainer(ctx, id)
	for _, sb := range f.Sandboxes() {
		_ = f.RemoveSandbox(ctx, sb.ID)
	}
	p.relistPod(ctx, "u")
	if got := fmt.Sprint(drain(p)); got != "[u:ContainerDied]" {
		t.Errorf("events %s; want [u:ContainerDied]", got)
	}
	if uids := c.UIDs(); len(uids) != 0 {
		t.Errorf("UIDs() = %v; a pod without backend objects is not listed", uids)
	}
}

func TestBackendEventRouting(t *testing.T) {
	ctx := context.Background()
	f, p, _ := setup(t)
	id := runningPod(t, f, "u")
	p.Relist(ctx)
	p.handleBackendEvent(runtime.Event{ContainerID: id, Action: "exited"})
	p.handleBackendEvent(runtime.Event{ContainerID: "not-ours", Action: "exited"})
	if n := p.pods.Len(); n != 1 {
		t.Fatalf("%d pods queued for a refresh; want the one that owns the container", n)
	}
	if uid, _ := p.pods.Get(); uid != "u" {
		t.Errorf("queued %q; want u", uid)
	}
	select {
	case <-p.trigger:
		t.Error("a container-only event asked for a full relist")
	default:
	}
}

func TestEventOlderThanTheViewIsNotRefreshedAgain(t *testing.T) {
	ctx := context.Background()
	f, p, _ := setup(t)
	runningPod(t, f, "u")
	before := time.Now()
	p.Relist(ctx)
	p.handleBackendEvent(runtime.Event{PodUID: "u", Action: "start", Time: before})
	if n := p.pods.Len(); n != 0 {
		t.Errorf("%d refreshes queued for an event the view already shows", n)
	}
	p.handleBackendEvent(runtime.Event{PodUID: "u", Action: "died", Time: time.Now()})
	if n := p.pods.Len(); n != 1 {
		t.Errorf("%d refreshes queued for a newer event; want 1", n)
	}
}

// TestHeldPodRefreshesOnceAfterItsStep: the events of a worker's own step
// wait for its end, and one refresh then covers them.
func TestHeldPodRefreshesOnceAfterItsStep(t *testing.T) {
	_, p, _ := setup(t)
	p.Hold("u")
	for range 4 {
		p.handleBackendEvent(runtime.Event{PodUID: "u", Time: time.Now()})
	}
	p.handleBackendEvent(runtime.Event{PodUID: "other", Time: time.Now()})
	if n := p.pods.Len(); n != 1 {
		t.Fatalf("%d pods queued for refresh during the step; want only the pod not held", n)
	}
	p.handleBackendEvent(runtime.Event{PodUID: "u", ContainerID: "c1", Action: "died", Time: time.Now()})
	if n := p.pods.Len(); n != 2 {
		t.Fatalf("%d pods queued after a death no exit report told of; want the held pod refreshed at once", n)
	}
	p.Release("u", false)
	if n := p.pods.Len(); n != 2 {
		t.Errorf("%d pods queued after the release; want the held one once", n)
	}

	p.Hold("quiet")
	p.Release("quiet", false)
	if n := p.pods.Len(); n != 2 {
		t.Errorf("a step without events or changes queued a refresh (%d queued)", n)
	}
	p.Hold("changed")
	p.Release("changed", true)
	if n := p.pods.Len(); n != 3 {
		t.Errorf("a step that changed the backend queued no refresh (%d queued)", n)
	}
}
