package kuberuntime

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBackoffPersistsWithinABoot: a restarted runlet keeps a crash loop's
// back-off; after a reboot, and from a file of the format before the boot
// was kept, as the case may be, it starts over or goes on.
func TestBackoffPersistsWithinABoot(t *testing.T) {
	dir := t.TempDir()
	boot := filepath.Join(dir, "boot_id")
	old := bootIDPath
	bootIDPath = boot
	t.Cleanup(func() { bootIDPath = old })
	setBoot := func(id string) {
		if err := os.WriteFile(boot, []byte(id+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "backoff.json")
	exit := time.Now()
	load := func() *backoff {
		b := newBackoff(10*time.Second, 5*time.Minute)
		if err := b.persist(path); err != nil {
			t.Fatal(err)
		}
		return b
	}

	setBoot("boot-1")
	b := load()
	b.Next("pod/c/1", exit)
	b.Next("pod/c/1", exit)
	if got := load().Get("pod/c/1"); got != 20*time.Second {
		t.Errorf("after a restart in the same boot: delay %v; want 20s", got)
	}
	setBoot("boot-2")
	if b := load(); b.Get("pod/c/1") != 0 || b.IsInBackOffSince("pod/c/1", exit) {
		t.Errorf("after a reboot: delay %v; want none", b.Get("pod/c/1"))
	}

	legacy := `{"pod/c/1":{"delay":40000000000,"lastUpdate":"` + exit.Format(time.RFC3339Nano) + `"}}`
	if err := os.WriteFile(path, []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := load().Get("pod/c/1"); got != 40*time.Second {
		t.Errorf("from a file without its boot: delay %v; want 40s", got)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := newBackoff(time.Second, time.Minute).persist(path); err == nil {
		t.Error("a torn file was read without an error")
	}
}
