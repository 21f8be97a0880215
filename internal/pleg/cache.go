package pleg

import (
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// Cache holds the newest runtime view of every pod, stamped with the start
// of the relist that produced it. Workers wait for a view newer than their
// last sync, so they never act on what they themselves made stale.
type Cache struct {
	mu   sync.Mutex
	cond *sync.Cond
	pods map[string]*runtime.PodStatus
	// global is the start of the newest complete relist: every pod the cache
	// does not hold is known to have no backend objects as of then.
	global time.Time
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	c := &Cache{pods: map[string]*runtime.PodStatus{}}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// Get returns the newest view of the pod (an empty one if none is known).
func (c *Cache) Get(uid string) *runtime.PodStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getLocked(uid)
}

func (c *Cache) getLocked(uid string) *runtime.PodStatus {
	if s, ok := c.pods[uid]; ok {
		return s
	}
	return &runtime.PodStatus{UID: uid, Timestamp: c.global}
}

// GetNewerThan blocks until the cache holds a view of the pod from a relist
// that began after t, or until stop is closed.
func (c *Cache) GetNewerThan(uid string, t time.Time, stop <-chan struct{}) *runtime.PodStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		s := c.getLocked(uid)
		if s.Timestamp.After(t) || c.global.After(t) {
			if s.Timestamp.Before(c.global) {
				s = &runtime.PodStatus{UID: uid, Sandboxes: s.Sandboxes, Containers: s.Containers, Timestamp: c.global}
			}
			return s
		}
		select {
		case <-stop:
			return s
		default:
		}
		c.cond.Wait()
	}
}

// replace swaps in a full relist result.
func (c *Cache) replace(pods map[string]*runtime.PodStatus, ts time.Time) {
	c.mu.Lock()
	c.pods = pods
	c.global = ts
	c.mu.Unlock()
	c.cond.Broadcast()
}

// Wake releases waiters so they can notice a closed stop channel.
func (c *Cache) Wake() { c.cond.Broadcast() }

// UIDs lists the pods the newest relist found backend objects for.
func (c *Cache) UIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.pods))
	for uid := range c.pods {
		out = append(out, uid)
	}
	return out
}
