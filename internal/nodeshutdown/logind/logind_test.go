package logind_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/leaktest"
	"github.com/runlet/runlet/internal/nodeshutdown/logind"
	"github.com/runlet/runlet/internal/nodeshutdown/logind/logindtest"
	"github.com/runlet/runlet/internal/polltest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// TestLogindOverTheSystemBus runs runlet's side against a private bus: the
// delay read and raised, the lock passed as a file descriptor and released
// by Close, and PrepareForShutdown delivered both ways.
func TestLogindOverTheSystemBus(t *testing.T) {
	addr := logindtest.StartBus(t)
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", addr)
	logind.ConfDir = t.TempDir()
	fake := logindtest.Start(t, addr, 5*time.Second, filepath.Join(logind.ConfDir, logind.ConfName))

	c, err := logind.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if d, err := c.InhibitDelayMax(); err != nil || d != 5*time.Second {
		t.Fatalf("InhibitDelayMax = %v, %v; want 5s", d, err)
	}
	if err := c.OverrideInhibitDelay(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if d, err := c.InhibitDelayMax(); err != nil || d != 30*time.Second {
		t.Errorf("after the override InhibitDelayMax = %v, %v; want 30s", d, err)
	}
	if _, kills := fake.Calls(); len(kills) != 1 || kills[0] != "systemd-logind.service all 1" {
		t.Errorf("KillUnit calls %q; want SIGHUP to systemd-logind.service", kills)
	}

	lock, err := c.Inhibit()
	if err != nil {
		t.Fatal(err)
	}
	if inhibits, _ := fake.Calls(); len(inhibits) != 1 || inhibits[0] != "shutdown runlet delay" {
		t.Errorf("Inhibit calls %q; want a delay lock on shutdown by runlet", inhibits)
	}
	fake.Handed()
	if held, err := fake.Held(); err != nil || !held {
		t.Fatalf("lock held %v, %v before Close; want held", held, err)
	}
	lock.Close()
	// The bus may still hold a copy of the descriptor it passed on for a
	// moment: the lock is released once every copy is closed.
	polltest.Eventually(t, 5*time.Second, "the lock released after Close", func() bool {
		held, err := fake.Held()
		return err == nil && !held
	})

	events, err := c.PrepareForShutdown()
	if err != nil {
		t.Fatal(err)
	}
	for _, active := range []bool{true, false} {
		if err := fake.PrepareForShutdown(active); err != nil {
			t.Fatal(err)
		}
		if got := <-events; got != active {
			t.Errorf("PrepareForShutdown(%v) delivered as %v", active, got)
		}
	}
}

func TestConnectWithoutABusFails(t *testing.T) {
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "none"))
	if c, err := logind.Connect(); err == nil {
		c.Close()
		t.Error("Connect succeeded without a bus")
	}
}
