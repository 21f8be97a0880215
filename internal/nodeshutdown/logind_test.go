package nodeshutdown

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/polltest"
	"github.com/sirupsen/logrus"
)

// fakeLogind is logind on a system bus: its delay, the locks it hands
// out, and the PrepareForShutdown signals the test sends.
type fakeLogind struct {
	mu        sync.Mutex
	delay     time.Duration
	overrides []time.Duration
	locks     []*fakeLock
	events    chan bool
}

type fakeLock struct {
	mu     sync.Mutex
	closed bool
}

func (l *fakeLock) Close() error { l.mu.Lock(); l.closed = true; l.mu.Unlock(); return nil }
func (l *fakeLock) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

func (f *fakeLogind) InhibitDelayMax() (time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.delay, nil
}

func (f *fakeLogind) OverrideInhibitDelay(d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.overrides, f.delay = append(f.overrides, d), d
	return nil
}

func (f *fakeLogind) Inhibit() (io.Closer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := &fakeLock{}
	f.locks = append(f.locks, l)
	return l, nil
}

func (f *fakeLogind) PrepareForShutdown() (<-chan bool, error) { return f.events, nil }
func (f *fakeLogind) Close() error                             { return nil }

// lock is the n-th lock taken, nil before.
func (f *fakeLogind) lock(n int) *fakeLock {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n >= len(f.locks) {
		return nil
	}
	return f.locks[n]
}

func watch(t *testing.T, m *Manager, connect func() (Inhibitor, error)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); WatchLogind(ctx, m, connect, logrus.NewEntry(logrus.New())) }()
	t.Cleanup(func() { cancel(); <-done })
}

// PrepareForShutdown(true) runs the shutdown under logind's lock, which
// is released once the pods have stopped; PrepareForShutdown(false)
// undoes the shutdown state and takes a new lock.
func TestLogindShutdownHoldsTheLockUntilThePodsStop(t *testing.T) {
	node := newFakeNode(pod("web", nil, nil))
	m, _, _ := newManager(t, node, 20*time.Second, 10*time.Second)
	lg := &fakeLogind{delay: 5 * time.Second, events: make(chan bool)}
	watch(t, m, func() (Inhibitor, error) { return lg, nil })
	polltest.Eventually(t, 5*time.Second, "the inhibitor lock", func() bool { return lg.lock(0) != nil })
	if len(lg.overrides) != 1 || lg.overrides[0] != 30*time.Second {
		t.Errorf("InhibitDelayMaxSec overrides %v; want 30s, the whole grace period", lg.overrides)
	}

	lg.events <- true
	polltest.Eventually(t, 5*time.Second, "the pod's kill", func() bool { return len(node.killed()) == 1 })
	if lg.lock(0).isClosed() {
		t.Fatal("lock released before the pod stopped")
	}
	node.stop("web")
	polltest.Eventually(t, 5*time.Second, "the lock's release", lg.lock(0).isClosed)

	lg.events <- false
	polltest.Eventually(t, 5*time.Second, "a new lock", func() bool { return lg.lock(1) != nil })
	if m.ShutdownStatus() != nil {
		t.Error("the node still shuts down after logind called the shutdown off")
	}
}

func TestNoSystemBusLeavesTheSocketAlone(t *testing.T) {
	m, _, _ := newManager(t, newFakeNode(), 20*time.Second, 10*time.Second)
	done := make(chan struct{})
	go func() {
		defer close(done)
		WatchLogind(context.Background(), m, func() (Inhibitor, error) { return nil, errors.New("no such file") }, logrus.NewEntry(logrus.New()))
	}()
	<-done // returns by itself
	if m.ShutdownStatus() != nil {
		t.Error("node shuts down without a trigger")
	}
}
