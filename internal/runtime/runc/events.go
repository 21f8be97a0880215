package runc

import (
	"context"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/conmon"
)

// eventBuffer is how many hints a slow watcher may fall behind by; past
// it, hints are dropped and the core's relist finds the change.
const eventBuffer = 256

// broadcaster hands the backend's hints to every watcher.
type broadcaster struct {
	mu   sync.Mutex
	subs map[chan runtime.Event]struct{}
}

func newBroadcaster() *broadcaster { return &broadcaster{subs: map[chan runtime.Event]struct{}{}} }

func (x *broadcaster) send(ev runtime.Event) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for ch := range x.subs {
		select {
		case ch <- ev:
		default:
		}
	}
}

func (x *broadcaster) subscribe(ctx context.Context) <-chan runtime.Event {
	ch := make(chan runtime.Event, eventBuffer)
	x.mu.Lock()
	x.subs[ch] = struct{}{}
	x.mu.Unlock()
	go func() {
		<-ctx.Done()
		x.mu.Lock()
		delete(x.subs, ch)
		x.mu.Unlock()
		close(ch)
	}()
	return ch
}

// Events streams the backend's own changes and, from conmon's exit files,
// every end of a container, with its exit. One watch of the exit directory
// serves every stream, for the backend's life.
func (b *Backend) Events(ctx context.Context) (<-chan runtime.Event, error) {
	b.watchOnce.Do(func() {
		w, err := conmon.WatchExits(b.exitDir())
		if err != nil {
			b.watchErr = err
			return
		}
		go func() {
			defer w.Close()
			w.Run(b.ctx, func(id, _ string) bool {
				b.exited(id)
				return true
			})
		}()
	})
	if b.watchErr != nil {
		return nil, b.watchErr
	}
	return b.events.subscribe(ctx), nil
}

// exited sends the hint of one container's end.
func (b *Backend) exited(id string) {
	rec, err := b.readContainer(id)
	if err != nil || !b.owned(rec.Config.Labels) {
		return
	}
	exit, ok := b.exitOf(rec)
	if !ok {
		return
	}
	b.events.send(runtime.Event{PodUID: rec.PodUID, ContainerID: id, Action: runtime.ActionDied, Time: time.Now(), Exit: &exit})
}
