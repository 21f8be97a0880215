package imagestore

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sys/unix"
)

// Options tune a Store; the zero value is usable.
type Options struct {
	// MinAge keeps an image from GC for this long after its last use, as
	// the kubelet's ImageMinimumGCAge does: an image just ensured for a
	// container that is not created yet is not in use either.
	MinAge time.Duration
	// Platform is what a pull picks from a multi-platform image, and a load
	// from a nested OCI index; the zero value is linux on this machine's
	// architecture.
	Platform v1.Platform
	// Transport carries registry requests; nil is go-containerregistry's
	// default (proxy from the environment, retries).
	Transport http.RoundTripper
}

func (o Options) withDefaults() Options {
	if o.Platform.OS == "" {
		o.Platform = v1.Platform{OS: "linux", Architecture: goruntime.GOARCH}
	}
	return o
}

// Store is the image store under one root directory. It is safe for use
// from many goroutines; one process at a time may have a root open.
type Store struct {
	root string
	opts Options
	lock *os.File
	// owners: entries get the uid and gid their tar gives, which only root
	// can do; otherwise everything belongs to runlet's user.
	owners bool
	// opaque is the xattr that marks an opaque directory for overlayfs.
	opaque string

	mu   sync.Mutex
	idx  *index
	pins map[string]int // diffID → adds under way that use the layer

	saveMu sync.Mutex
	gen    uint64 // bumped under mu with every change to idx
	saved  uint64 // the last gen written, under saveMu

	gcMu sync.Mutex // one GC at a time: its trash names are per layer

	pulls  flight[string]
	layers flight[struct{}]

	now   func() time.Time
	usage func(path string) (capacity, available uint64, err error)
}

// Open opens the store under root, making it if need be, and tidies what a
// crash may have left.
func Open(root string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	for _, d := range []string{root, filepath.Join(root, "layers"), filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("image store: %w", err)
		}
	}
	lock, err := lockRoot(root)
	if err != nil {
		return nil, err
	}
	s := newStore(root, opts, lock)
	if err := s.recover(); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("image store %s: %w", root, err)
	}
	return s, nil
}

func newStore(root string, opts Options, lock *os.File) *Store {
	s := &Store{
		root:   root,
		opts:   opts,
		lock:   lock,
		owners: os.Geteuid() == 0,
		opaque: "trusted.overlay.opaque",
		pins:   map[string]int{},
		now:    time.Now,
		usage:  statfsUsage,
	}
	if !s.owners {
		s.opaque = "user.overlay.opaque"
	}
	return s
}

// lockRoot takes the root's lock: two processes writing one index would
// lose each other's images.
func lockRoot(root string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(root, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("image store: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("image store %s is in use by another process: %w", root, err)
	}
	return f, nil
}

// Close writes the last-used times, which are kept in memory between
// writes of the index, and releases the root.
func (s *Store) Close() error {
	s.mu.Lock()
	s.gen++
	s.mu.Unlock()
	err := s.save()
	if cerr := s.lock.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Store) tmpDir() string { return filepath.Join(s.root, "tmp") }

// layerDir is where a layer lives; diffIDs are checked to be sha256
// digests before they get here, so the name cannot leave layers/.
func (s *Store) layerDir(diffID string) string {
	return filepath.Join(s.root, "layers", strings.TrimPrefix(diffID, "sha256:"))
}
