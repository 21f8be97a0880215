package polltest

import (
	"testing"
	"time"
)

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	Eventually(t, time.Second, "the third look", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("cond called %d times; want 3", n)
	}
}

// fatalTB records a Fatalf instead of ending the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = format
	panic(f)
}

func TestEventuallyFailsAfterTheTimeout(t *testing.T) {
	f := &fatalTB{TB: t}
	start := time.Now()
	func() {
		defer func() {
			if r := recover(); r != f {
				t.Fatalf("recovered %v; want the Fatalf", r)
			}
		}()
		Eventually(f, 50*time.Millisecond, "never", func() bool { return false })
	}()
	if f.msg == "" {
		t.Fatal("no failure reported")
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("failed after %v; want at least the 50ms timeout", d)
	}
}
