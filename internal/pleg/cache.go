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

// merge stores views listed at ts, except over a pod's newer view. A full
// relist also drops the pods it did not list, unless their view is newer.
func (c *Cache) merge(pods map[string]*runtime.PodStatus, ts time.Time, full bool) {
	c.mu.Lock()
	for uid, ps := range pods {
		if old, ok := c.pods[uid]; !ok || !old.Timestamp.After(ts) {
			c.pods[uid] = ps
		}
	}
	if full {
		for uid, old := range c.pods {
			if _, listed := pods[uid]; !listed && !old.Timestamp.After(ts) {
				delete(c.pods, uid)
			}
		}
		if ts.After(c.global) {
			c.global = ts
		}
	}
	c.mu.Unlock()
	c.cond.Broadcast()
}

// set stores one pod's view as it is.
func (c *Cache) set(uid string, ps *runtime.PodStatus) {
	c.mu.Lock()
	c.pods[uid] = ps
	c.mu.Unlock()
	c.cond.Broadcast()
}

// newerThan reports whether the cache knows the pod from a view taken after
// ts; a pod it does not hold is known as of the last full relist.
func (c *Cache) newerThan(uid string, ts time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.pods[uid]; ok {
		return old.Timestamp.After(ts)
	}
	return c.global.After(ts)
}

// Listed reports whether a complete relist has filled the cache: until
// then a pod it does not hold may still have backend objects.
func (c *Cache) Listed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.global.IsZero()
}

// Wake releases waiters so they can notice a closed stop channel.
func (c *Cache) Wake() { c.cond.Broadcast() }

// UIDs lists the pods the newest views found backend objects for.
func (c *Cache) UIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.pods))
	for uid, ps := range c.pods {
		if len(ps.Sandboxes) > 0 || len(ps.Containers) > 0 {
			out = append(out, uid)
		}
	}
	return out
}
