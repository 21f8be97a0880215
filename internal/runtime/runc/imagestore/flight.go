package imagestore

import (
	"context"
	"sync"
)

// flight runs one call per key at a time, and hands its result to every
// caller that asked for the key meanwhile: a singleflight that honours
// contexts. The call runs on a context of its own, so a caller that gives
// up stops waiting without failing the others; the call is cancelled once
// nobody waits for it, and a later caller starts afresh.
type flight[T any] struct {
	mu    sync.Mutex
	calls map[string]*call[T]
	// joined, when set, hears of each caller that joins a call under way.
	joined func(key string)
}

type call[T any] struct {
	key     string
	done    chan struct{}
	cancel  context.CancelFunc
	waiters int
	val     T // set before done is closed
	err     error
}

func (f *flight[T]) do(ctx context.Context, key string, fn func(context.Context) (T, error)) (T, error) {
	c, joined := f.join(ctx, key, fn)
	if joined && f.joined != nil {
		f.joined(key)
	}
	select {
	case <-c.done:
		return c.val, c.err
	case <-ctx.Done():
		f.leave(c)
		var zero T
		return zero, ctx.Err()
	}
}

func (f *flight[T]) join(ctx context.Context, key string, fn func(context.Context) (T, error)) (*call[T], bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.calls[key]; ok {
		c.waiters++
		return c, true
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &call[T]{key: key, done: make(chan struct{}), cancel: cancel, waiters: 1}
	if f.calls == nil {
		f.calls = map[string]*call[T]{}
	}
	f.calls[key] = c
	go f.run(cctx, c, fn)
	return c, false
}

func (f *flight[T]) run(ctx context.Context, c *call[T], fn func(context.Context) (T, error)) {
	c.val, c.err = fn(ctx)
	c.cancel()
	f.mu.Lock()
	f.forget(c)
	f.mu.Unlock()
	close(c.done)
}

func (f *flight[T]) leave(c *call[T]) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.waiters--; c.waiters == 0 {
		c.cancel()
		f.forget(c)
	}
}

func (f *flight[T]) forget(c *call[T]) {
	if f.calls[c.key] == c {
		delete(f.calls, c.key)
	}
}
