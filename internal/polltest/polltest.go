// Package polltest waits, in a test, for a condition that another goroutine
// brings about: a worker finishing, a watch delivering, a file appearing.
//
//	polltest.Eventually(t, 10*time.Second, "the pod to start", func() bool { return started.Load() })
//
// Every caller polls at the same Interval; the timeout is the caller's, as it
// is part of what the test asserts.
package polltest

import (
	"testing"
	"time"
)

// Interval is the time between two looks at the condition: short enough not
// to slow a test down, long enough not to starve the goroutines under test.
const Interval = 10 * time.Millisecond

// Eventually calls cond at once and then every Interval until it holds, and
// fails the test, naming what it waited for, if it still does not after
// timeout. cond runs on the test's goroutine.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(Interval)
	}
}
