package podman

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// Events streams change hints. podman's file-backed event log replays
// ~1,700 old events when it rotates at 1 MB, and sends some spurious ones:
// anything older than the stream's start is dropped, and the rest is only a
// trigger for a refresh. conmon's exit files, when they can be watched, add
// an early hint for each exit. The channel closes when ctx ends or the
// stream breaks.
func (b *Backend) Events(ctx context.Context) (<-chan runtime.Event, error) {
	start := time.Now()
	// Only this node's containers: the event log is the host's, and other
	// nodes' pods (runlets sharing the podman) would each cost a refresh.
	body, err := b.client.EventStream(ctx, start, b.managedFilter(), lifecycleActions)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan runtime.Event, 128)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cancel() // a broken stream ends the exit watch too
		defer body.Close()
		pumpEvents(ctx, json.NewDecoder(body), start, b.opts.Owner, ch)
	}()
	if pump, ok := b.watchExits(ctx, ch); ok {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pump()
		}()
	}
	go func() {
		wg.Wait()
		close(ch)
	}()
	return ch, nil
}

func pumpEvents(ctx context.Context, dec *json.Decoder, start time.Time, owner string, ch chan<- runtime.Event) {
	for {
		var e libpod.Event
		if err := dec.Decode(&e); err != nil {
			return
		}
		ev, ok := toEvent(e, start, owner)
		if !ok {
			continue
		}
		select {
		case ch <- ev:
		case <-ctx.Done():
			return
		}
	}
}

// lifecycleActions are the events that change what a listing shows. The
// others (create, init, cleanup, mount, exec, ...) would only make the core
// list a pod again while podman is busy starting it.
var lifecycleActions = []string{"start", runtime.ActionDied, "remove"}

// toEvent keeps fresh lifecycle events of managed containers (of owner's,
// when runlet has one), whatever filter podman applied.
func toEvent(e libpod.Event, start time.Time, owner string) (runtime.Event, bool) {
	t := time.Unix(0, e.TimeNano)
	if e.TimeNano == 0 {
		t = time.Unix(e.Time, 0)
	}
	if t.Before(start) || e.Type != "container" {
		return runtime.Event{}, false
	}
	a := e.Actor.Attributes
	if a[runtime.LabelManaged] != "true" || !slices.Contains(lifecycleActions, e.Action) || e.Actor.ID == "" {
		return runtime.Event{}, false
	}
	if owner != "" && a[runtime.LabelOwner] != owner {
		return runtime.Event{}, false
	}
	return runtime.Event{PodUID: a[runtime.LabelPodUID], ContainerID: e.Actor.ID, Action: e.Action, Time: t}, true
}
