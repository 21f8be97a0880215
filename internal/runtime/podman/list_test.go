package podman

import (
	"context"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

func listEntry(id, state string, started, exited int64, code int, infra bool) map[string]any {
	l := map[string]string{runtime.LabelManaged: "true", runtime.LabelPodUID: "u1", runtime.LabelContainerName: "app", runtime.LabelAttempt: "3"}
	return map[string]any{"Id": id, "State": state, "StartedAt": started, "ExitedAt": exited, "ExitCode": code,
		"IsInfra": infra, "Labels": l, "Pod": "pod1", "ImageID": "img1", "Image": "localhost/img:1",
		"Created": "2026-11-30T11:00:00.123456789Z"}
}

func TestListContainersOneCallExcludesInfraRefinesOnChange(t *testing.T) {
	f := newFakePodman(t)
	started := time.Date(2026, 11, 30, 11, 0, 1, 250_000_000, time.UTC)
	exited := time.Date(2026, 11, 30, 11, 0, 2, 750_000_000, time.UTC)
	f.json("GET /containers/json", 200, []any{
		listEntry("infra", "running", started.Unix(), -62135596800, 0, true),
		listEntry("c1", "running", started.Unix(), -62135596800, 0, false),
		listEntry("c2", "created", -62135596800, -62135596800, 0, false),
	})
	f.json("GET /containers/c1/json", 200, map[string]any{"Id": "c1", "State": map[string]any{
		"Status": "running", "StartedAt": started, "FinishedAt": "0001-01-01T00:00:00Z"}})
	b := f.backend()
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		_, cs, err := b.List(ctx, runtime.ListFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 2 || cs[0].ID != "c1" || cs[1].ID != "c2" {
			t.Fatalf("listed %+v; want c1 and c2 only", cs)
		}
		c := cs[0]
		if !c.StartedAt.Equal(started) || c.State != runtime.ContainerRunning || c.Attempt != 3 || c.PodUID != "u1" || c.SandboxID != "pod1" || c.ImageID != "img1" {
			t.Errorf("c1 = %+v; want Running, started at %v with nanoseconds", c, started)
		}
		if cs[1].State != runtime.ContainerCreated || !cs[1].StartedAt.IsZero() {
			t.Errorf("c2 = %+v; want Created, never started", cs[1])
		}
	}
	q := f.sent("GET /containers/json")[0].Query
	if q["all"][0] != "true" || q["filters"][0] != `{"label":["io.runlet.managed=true"]}` {
		t.Errorf("list query = %v", q)
	}
	if n := len(f.sent("GET /containers/c1/json")); n != 1 {
		t.Errorf("c1 inspected %d times over 3 lists; want once", n)
	}

	// c1 exits (137, OOM): one more inspect, then served from the cache.
	f.json("GET /containers/json", 200, []any{listEntry("c1", "exited", started.Unix(), exited.Unix(), 137, false)})
	f.json("GET /containers/c1/json", 200, map[string]any{"Id": "c1", "State": map[string]any{
		"Status": "exited", "StartedAt": started, "FinishedAt": exited, "OOMKilled": true, "ExitCode": 137}})
	for i := 0; i < 2; i++ {
		_, cs, _ := b.List(ctx, runtime.ListFilter{})
		c := cs[0]
		if c.State != runtime.ContainerExited || c.ExitCode != 137 || !c.OOMKilled || !c.FinishedAt.Equal(exited) {
			t.Errorf("c1 = %+v; want Exited 137 OOMKilled at %v", c, exited)
		}
	}
	if n := len(f.sent("GET /containers/c1/json")); n != 2 {
		t.Errorf("c1 inspected %d times; want twice (once per state)", n)
	}
	if len(b.details) != 1 {
		t.Errorf("detail cache holds %d entries; want 1 (c1)", len(b.details))
	}
}

func TestListSandboxesFromInfra(t *testing.T) {
	f := newFakePodman(t)
	// Sandboxes are read from their infra containers in containers/json.
	f.json("GET /containers/json", 200, []any{
		map[string]any{"Id": "i1", "IsInfra": true, "Pod": "p1", "Labels": podLabels, "State": "running",
			"Created": "2026-11-30T11:00:00Z"},
		map[string]any{"Id": "i2", "IsInfra": true, "Pod": "p2", "Labels": podLabels, "State": "exited",
			"Created": "2026-11-30T10:00:00Z"},
	})
	f.json("GET /pods/p1/json", 200, map[string]any{"Id": "p1", "Labels": podLabels, "InfraContainerID": "i1"})
	f.json("GET /containers/i1/json", 200, map[string]any{"Id": "i1", "State": map[string]any{"Running": true},
		"NetworkSettings": map[string]any{"IPAddress": "10.88.0.2"}})
	b := f.backend()
	for i := 0; i < 2; i++ {
		sbs, _, err := b.List(context.Background(), runtime.ListFilter{})
		if err != nil || len(sbs) != 2 {
			t.Fatalf("List = %+v, %v", sbs, err)
		}
		if sbs[0].State != runtime.SandboxReady || len(sbs[0].IPs) != 1 || sbs[0].IPs[0] != "10.88.0.2" || sbs[0].Name != "web" || sbs[0].PodUID != podLabels[runtime.LabelPodUID] {
			t.Errorf("p1 = %+v", sbs[0])
		}
		if sbs[1].State != runtime.SandboxNotReady {
			t.Errorf("p2 = %+v; want NotReady", sbs[1])
		}
	}
	if n := len(f.sent("GET /containers/i1/json")); n != 1 {
		t.Errorf("infra inspected %d times; want once", n)
	}
}

func TestMapState(t *testing.T) {
	for in, want := range map[string]runtime.ContainerState{
		"created": runtime.ContainerCreated, "configured": runtime.ContainerCreated, "running": runtime.ContainerRunning,
		"paused": runtime.ContainerRunning, "exited": runtime.ContainerExited, "stopped": runtime.ContainerExited,
		"removing": runtime.ContainerUnknown,
	} {
		if got := mapState(in); got != want {
			t.Errorf("mapState(%s) = %s; want %s", in, got, want)
		}
	}
}
