package syncloop

import (
	"testing"

	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/podtest"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

type mirrorCall struct {
	static, terminating []*v1.Pod
	ready               bool
}

type fakeMirrors struct{ calls []mirrorCall }

func (f *fakeMirrors) Sync(static, terminating []*v1.Pod, ready bool) {
	f.calls = append(f.calls, mirrorCall{static, terminating, ready})
}

func podFrom(uid, source string) *v1.Pod {
	return podtest.New(uid, podtest.Namespace("ns"), podtest.UID(uid),
		podtest.Annotations(map[string]string{podconfig.ConfigSourceAnnotation: source}))
}

func uids(pods []*v1.Pod) []types.UID {
	var out []types.UID
	for _, p := range pods {
		out = append(out, p.UID)
	}
	return out
}

// TestHousekeepingFeedsMirrors: every housekeeping hands the static pods
// (and removed ones still stopping) to the mirror manager, even before
// every source was seen, and says whether they were.
func TestHousekeepingFeedsMirrors(t *testing.T) {
	fm := &fakeMirrors{}
	e := newLoopEnv(t, envOptions{manual: true, syncer: &fakeSyncer{calls: make(chan call, 100)}, sourcesSeen: func() bool { return false },
		config: func(c *Config) { c.Mirror = fm }})
	ctx, l := e.ctx, e.loop
	l.pods.set(podFrom("static", podconfig.FileSource))
	l.pods.set(podFrom("api", podconfig.APISource))
	l.workers.work["stopping"] = &podWork{pod: podFrom("stopping", podconfig.HTTPSource)}
	l.workers.work["stopped"] = &podWork{pod: podFrom("stopped", podconfig.FileSource), finished: true}

	l.housekeeping(ctx)
	if len(fm.calls) != 1 {
		t.Fatalf("%d mirror syncs, want 1", len(fm.calls))
	}
	c := fm.calls[0]
	if got := uids(c.static); len(got) != 1 || got[0] != "static" {
		t.Errorf("static = %v, want [static]", got)
	}
	if got := uids(c.terminating); len(got) != 1 || got[0] != "stopping" {
		t.Errorf("terminating = %v, want [stopping]", got)
	}
	if c.ready {
		t.Error("sources reported ready before they were seen")
	}
}

// TestStaticUpdateFeedsMirrorsAtOnce: a change from a static source reaches
// the mirror manager without waiting for housekeeping; api changes do not.
func TestStaticUpdateFeedsMirrorsAtOnce(t *testing.T) {
	fm := &fakeMirrors{}
	l := newLoopEnv(t, envOptions{manual: true, syncer: &fakeSyncer{calls: make(chan call, 100)}, sourcesSeen: func() bool { return true },
		config: func(c *Config) { c.Mirror = fm }}).loop

	l.handleUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Source: podconfig.APISource, Pods: []*v1.Pod{podFrom("api", podconfig.APISource)}})
	if len(fm.calls) != 0 {
		t.Fatalf("an api update synced mirrors: %+v", fm.calls)
	}
	l.handleUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Source: podconfig.FileSource, Pods: []*v1.Pod{podFrom("static", podconfig.FileSource)}})
	if len(fm.calls) != 1 || len(fm.calls[0].static) != 1 || !fm.calls[0].ready {
		t.Fatalf("mirror syncs = %+v, want one with the static pod", fm.calls)
	}
}
