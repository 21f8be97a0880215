package pleg

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

func TestExitReportedAheadOfTheListing(t *testing.T) {
	ctx := context.Background()
	f, p, c := setup(t)
	id := runningPod(t, f, "u")
	p.Relist(ctx)
	drain(p)
	stamp := c.Get("u").Timestamp
	end := time.Now().Add(-time.Millisecond)

	p.handleBackendEvent(runtime.Event{ContainerID: id, Action: "exited", Exit: &runtime.ContainerExit{ExitCode: 137, FinishedAt: end, OOMKilled: true}})
	if got := fmt.Sprint(drain(p)); got != "[u:ContainerDied]" {
		t.Errorf("events %s; want [u:ContainerDied] at once", got)
	}
	ps := c.Get("u")
	cur, _ := ps.Latest("c")
	if cur == nil || cur.State != runtime.ContainerExited || cur.ExitCode != 137 || !cur.OOMKilled || !cur.FinishedAt.Equal(end) {
		t.Fatalf("cached container %+v; want exited 137, OOM-killed, finished %v", cur, end)
	}
	if !ps.Timestamp.Equal(stamp) {
		t.Errorf("view stamped %v; want the listing's %v: only one container is known newer", ps.Timestamp, stamp)
	}
	if p.pods.Len() != 1 {
		t.Errorf("no refresh of the pod queued behind the exit")
	}

	// The backend still lists the container running (its cleanup is behind):
	// the exit stands, and nothing is reported twice.
	p.Relist(ctx)
	if got := fmt.Sprint(drain(p)); got != "[]" {
		t.Errorf("events after a lagging relist %s; want none", got)
	}
	if cur, _ := c.Get("u").Latest("c"); cur.State != runtime.ContainerExited {
		t.Errorf("a lagging relist revived the container: %+v", cur)
	}
	// Once the backend shows the exit, its own view is the truth again.
	_ = f.Exit(id, 1)
	p.Relist(ctx)
	if cur, _ := c.Get("u").Latest("c"); cur.ExitCode != 1 || len(p.exits) != 0 {
		t.Errorf("container %+v, exits kept %v; want the backend's view and no overlay", cur, p.exits)
	}
}

func TestExitOfAForeignContainerIsIgnored(t *testing.T) {
	ctx := context.Background()
	f, p, c := setup(t)
	runningPod(t, f, "u")
	p.Relist(ctx)
	drain(p)
	p.handleBackendEvent(runtime.Event{ContainerID: "someone-elses", Action: "exited", Exit: &runtime.ContainerExit{ExitCode: 0}})
	if got := fmt.Sprint(drain(p)); got != "[]" || len(p.exits) != 0 || p.pods.Len() != 0 {
		t.Errorf("events %s, exits %v, refreshes %d; want nothing", got, p.exits, p.pods.Len())
	}
	if cur, _ := c.Get("u").Latest("c"); cur.State != runtime.ContainerRunning {
		t.Errorf("pod u changed: %+v", cur)
	}
}
