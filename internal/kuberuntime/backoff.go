package kuberuntime

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// backoff is the kubelet's per-container restart back-off (flowcontrol's
// semantics), optionally kept in a file so a restarted runlet does not
// restart a crash-looping container at once.
type backoff struct {
	mu      sync.Mutex
	initial time.Duration
	max     time.Duration
	entries map[string]*backoffEntry
	path    string
	bootID  string // the boot the entries belong to (persist)
	now     func() time.Time
}

type backoffEntry struct {
	Delay      time.Duration `json:"delay"`
	LastUpdate time.Time     `json:"lastUpdate"`
}

func newBackoff(initial, max time.Duration) *backoff {
	return &backoff{initial: initial, max: max, entries: map[string]*backoffEntry{}, now: time.Now}
}

// expired reports an entry untouched for twice the maximum: it starts over.
func (b *backoff) expired(e *backoffEntry, t time.Time) bool {
	return t.Sub(e.LastUpdate) > 2*b.max
}

// Get returns the current delay of key.
func (b *backoff) Get(key string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.entries[key]; ok {
		return e.Delay
	}
	return 0
}

// Next records a restart of key at t and grows its delay.
func (b *backoff) Next(key string, t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok || b.expired(e, t) {
		e = &backoffEntry{Delay: b.initial}
		b.entries[key] = e
	} else {
		e.Delay = min(2*e.Delay, b.max)
	}
	e.LastUpdate = t
	b.saveLocked()
}

// IsInBackOffSince reports whether an event at t (a container's exit) is
// still within key's delay.
func (b *backoff) IsInBackOffSince(key string, t time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok || b.expired(e, t) {
		return false
	}
	return b.now().Sub(t) < e.Delay
}

// IsInBackOffSinceUpdate reports whether key's last update is within its delay.
func (b *backoff) IsInBackOffSinceUpdate(key string, t time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok || b.expired(e, t) {
		return false
	}
	return t.Sub(e.LastUpdate) < e.Delay
}

// Reset forgets key.
func (b *backoff) Reset(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.entries[key]; ok {
		delete(b.entries, key)
		b.saveLocked()
	}
}

// GC drops expired entries.
func (b *backoff) GC() {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.entries)
	for k, e := range b.entries {
		if b.expired(e, b.now()) {
			delete(b.entries, k)
		}
	}
	if len(b.entries) != n {
		b.saveLocked()
	}
}

// bootIDPath names the host's boot: a persisted back-off belongs to one.
var bootIDPath = "/proc/sys/kernel/random/boot_id"

// backoffFile is what persist keeps: the entries, and the boot they were
// recorded in.
type backoffFile struct {
	BootID  string                   `json:"bootID"`
	Entries map[string]*backoffEntry `json:"entries"`
}

// persist loads the entries kept in path and keeps saving there. Entries of
// an earlier boot are dropped: a restart of runlet keeps a crash loop's
// pace, but after a reboot the containers start at once, as a kubelet
// starts them with its back-off, which it holds in memory, gone.
func (b *backoff) persist(path string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.path = path
	id, _ := os.ReadFile(bootIDPath)
	b.bootID = strings.TrimSpace(string(id))
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var f backoffFile
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	if f.Entries == nil {
		// kept before the boot was: the entries alone
		return json.Unmarshal(data, &b.entries)
	}
	if f.BootID == b.bootID {
		b.entries = f.Entries
	}
	return nil
}

func (b *backoff) saveLocked() {
	if b.path == "" {
		return
	}
	data, _ := json.Marshal(backoffFile{BootID: b.bootID, Entries: b.entries})
	tmp := b.path + ".tmp"
	if err := os.MkdirAll(filepath.Dir(b.path), 0o700); err != nil {
		return
	}
	if err := os.WriteFile(tmp, data, 0o600); err == nil {
		_ = os.Rename(tmp, b.path)
	}
}
