package podconfig

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// updatesBuffer matches the kubelet's buffered updates channel.
const updatesBuffer = 50

// Config is the mux: each source gets its own channel of full snapshots and
// one goroutine that merges it into the shared storage.
type Config struct {
	updates chan PodUpdate
	store   *storage

	mu      sync.Mutex
	sources []string
	ctx     context.Context
}

// New returns a mux whose merge goroutines live as long as ctx.
func New(ctx context.Context, rec record.EventRecorder) *Config {
	updates := make(chan PodUpdate, updatesBuffer)
	return &Config{updates: updates, store: newStorage(updates, rec), ctx: ctx}
}

// Channel registers a source and returns where it sends its snapshots. A
// source never changes a pod once sent: a changed pod is a new object, and
// one sent again unchanged may be the same object.
func (c *Config) Channel(source string) chan<- []*v1.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources = append(c.sources, source)
	ch := make(chan []*v1.Pod)
	go func() {
		for {
			select {
			case <-c.ctx.Done():
				return
			case pods := <-ch:
				c.store.merge(source, pods)
			}
		}
	}()
	return ch
}

// Updates is the merged stream the sync loop reads.
func (c *Config) Updates() <-chan PodUpdate { return c.updates }

// Sources lists the registered sources.
func (c *Config) Sources() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sources...)
}

// SeenAllSources reports whether every registered source has reported once.
func (c *Config) SeenAllSources() bool {
	return c.store.seenAll(c.Sources()...)
}
