package runtimefake

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	f := New()
	sb, err := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "u1", Namespace: "ns", Name: "p"})
	if err != nil || sb.State != runtime.SandboxReady || len(sb.IPs) != 1 {
		t.Fatalf("CreateSandbox = %+v, %v", sb, err)
	}
	id, err := f.CreateContainer(ctx, sb.ID, runtime.ContainerConfig{Name: "c", Attempt: 2, Image: "img:1",
		Labels: runtime.ContainerLabels(runtime.PodLabels("u1", "ns", "p"), "c", 2)})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Exit(id, 1); err == nil {
		t.Error("Exit of a created container succeeded")
	}
	if err := f.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := f.Exit(id, 3); err != nil {
		t.Fatal(err)
	}
	c, err := f.InspectContainer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != runtime.ContainerExited || c.ExitCode != 3 || c.Attempt != 2 || c.PodUID != "u1" ||
		c.Labels[runtime.LabelPodUID] != "u1" || c.FinishedAt.Before(c.StartedAt) || c.StartedAt.IsZero() {
		t.Errorf("container = %+v", c)
	}
	if err := f.StopContainer(ctx, "nope", time.Second); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("StopContainer(missing) = %v; want ErrNotFound", err)
	}
	if err := f.RemoveSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if len(f.Containers()) != 0 || len(f.Sandboxes()) != 0 {
		t.Errorf("RemoveSandbox left %v %v", f.Containers(), f.Sandboxes())
	}
}

func TestFailuresAndImages(t *testing.T) {
	ctx := context.Background()
	f := New()
	f.SetImageMissing(true, "gone:1")
	if _, err := f.EnsureImage(ctx, "gone:1", runtime.PullIfNotPresent, nil); !errors.Is(err, runtime.ErrImageNotFound) {
		t.Errorf("EnsureImage(missing) = %v", err)
	}
	if _, err := f.EnsureImage(ctx, "there:1", runtime.PullIfNotPresent, nil); err != nil {
		t.Errorf("EnsureImage = %v", err)
	}
	boom := errors.New("boom")
	f.Fail("CreateSandbox", boom)
	if _, err := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "u"}); !errors.Is(err, boom) {
		t.Errorf("CreateSandbox = %v; want injected error", err)
	}
	f.Fail("CreateSandbox", nil)
	if _, err := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "u"}); err != nil {
		t.Errorf("CreateSandbox after clearing = %v", err)
	}
	if n := f.Calls("CreateSandbox"); n != 2 {
		t.Errorf("Calls = %d; want 2", n)
	}
	if n := f.Calls("EnsureImage"); n != 2 {
		t.Errorf("Calls(EnsureImage) = %d; want 2", n)
	}
}

func TestEvents(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := New()
	ch, err := f.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "u"}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ch:
		if ev.PodUID != "u" {
			t.Errorf("event = %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	cancel()
	for range ch { // closed once ctx ends
	}
}
