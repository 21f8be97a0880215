// Package checkpoint is the node's local copy of its API pods, kept under
// --root-dir so that runlet can run them again when it starts while the
// apiserver cannot be reached (after a reboot too), as a kubelet runs its
// static pods:
//
//	checkpoint/pods/<uid>.json                a pod: its spec and the last status runlet wrote
//	checkpoint/configmaps/<ns>_<name>.json    what the pods' volumes and env read
//	checkpoint/secrets/<ns>_<name>.json
//	checkpoint/services/<ns>.json             the service links of a namespace
//	checkpoint/tokens/<uid>_<key>.json        a pod's service account tokens
//	checkpoint/trustbundles/<key>.json        ClusterTrustBundle anchors
//	checkpoint/node.json                      the Node's labels, taints and pod CIDRs
//
// Every file is written atomically (internal/atomicfile: owner-only,
// replaced by a rename) and carries a checksum over its data, so that a
// file torn by a crash is refused with a log line and never run. The
// directory is root's alone (0700), as secrets at rest must be. A pod's
// entry goes when the API's pods no longer hold it; the objects go with
// the last pod that refers to them.
//
// Changes are kept in memory at once and written by Run's one goroutine, the
// newest content of a file winning: the api source and the status manager
// never wait on the disk.
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/runlet/runlet/internal/atomicfile"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The directories of the checkpoint, each holding one kind of entry.
const (
	podsDir         = "pods"
	configMapsDir   = "configmaps"
	secretsDir      = "secrets"
	servicesDir     = "services"
	tokensDir       = "tokens"
	trustBundlesDir = "trustbundles"
	nodeFile        = "node.json"
)

var objectDirs = []string{configMapsDir, secretsDir, servicesDir, tokensDir, trustBundlesDir}

// Store is the checkpoint of one node.
type Store struct {
	dir string
	log logrus.FieldLogger

	mu sync.Mutex
	// pods are the node's API pods, by UID.
	pods map[types.UID]*podEntry
	// objects maps each object file (relative path) to its data's checksum.
	objects map[string]string
	// versions maps object files to the version of what was put last.
	versions map[string]string
	// wanted are the object files the pods refer to; nil: to be computed.
	wanted sets.Set[string]
	// gcDue: pods changed since the objects were last collected.
	gcDue bool
	// node is the Node as last seen (trimmed), and its data's checksum.
	node    *v1.Node
	nodeSum string
	// pending maps each file to write to its content; nil removes it.
	pending map[string][]byte
	kick    chan struct{}
	// flushMu keeps one batch's writes from overtaking another's.
	flushMu sync.Mutex

	offline atomic.Bool
}

// podEntry is a pod as the api source holds it (never changed: the source
// hands over a new object for every change) and the status runlet last
// wrote for it.
type podEntry struct {
	pod    *v1.Pod
	status *v1.PodStatus
	sum    string
}

// Open reads the checkpoint under dir, making the directory if need be.
// Entries that fail their checksum are logged, removed and never returned.
func Open(dir string, log logrus.FieldLogger) (*Store, error) {
	for _, d := range append([]string{"", podsDir}, objectDirs...) {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	s := &Store{dir: dir, log: log, pods: map[types.UID]*podEntry{}, objects: map[string]string{},
		versions: map[string]string{},
		pending:  map[string][]byte{}, kick: make(chan struct{}, 1)}
	s.loadPods()
	for _, d := range objectDirs {
		s.indexObjects(d)
	}
	s.loadNode()
	s.gcDue = true // objects a crash left behind their pods' removal
	return s, nil
}

// Dir is where the checkpoint lives.
func (s *Store) Dir() string { return s.dir }

// SetOffline records whether runlet runs the checkpoint's pods because the
// API has not answered; while it does, the objects the pods read come from
// the checkpoint.
func (s *Store) SetOffline(offline bool) { s.offline.Store(offline) }

// Offline reports whether runlet runs from the checkpoint.
func (s *Store) Offline() bool { return s.offline.Load() }

// entries lists the entry files of one directory, removing what a crash
// left of unfinished writes (atomicfile's hidden temporary files).
func (s *Store) entries(dir string) []string {
	des, err := os.ReadDir(filepath.Join(s.dir, dir))
	if err != nil {
		if !isNotExist(err) {
			s.log.WithError(err).Warn("checkpoint directory unreadable")
		}
		return nil
	}
	var out []string
	for _, de := range des {
		name := de.Name()
		switch {
		case strings.HasPrefix(name, "."):
			_ = os.Remove(filepath.Join(s.dir, dir, name))
		case strings.HasSuffix(name, ".json") && de.Type().IsRegular():
			out = append(out, filepath.Join(dir, name))
		}
	}
	return out
}

func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

// refuse logs an entry that cannot be read back and removes it, so that it
// is neither run nor reported again.
func (s *Store) refuse(rel string, err error) {
	s.log.WithError(err).WithField("file", filepath.Join(s.dir, rel)).Warn("checkpoint entry refused and removed")
	_ = os.Remove(filepath.Join(s.dir, rel))
}

// queue records a file's new content (nil: its removal) for Run to write.
// Call with s.mu held.
func (s *Store) queue(rel string, content []byte) {
	s.pending[rel] = content
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run writes the queued changes until ctx ends, then writes what is left.
func (s *Store) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			s.Flush()
			return
		case <-s.kick:
			s.Flush()
		}
	}
}

// Flush writes every queued change now, and drops the objects no pod refers
// to any more.
func (s *Store) Flush() {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	s.collectGarbage()
	batch := s.pending
	s.pending = map[string][]byte{}
	s.mu.Unlock()
	for rel, content := range batch {
		path := filepath.Join(s.dir, rel)
		var err error
		if content == nil {
			if err = os.Remove(path); isNotExist(err) {
				err = nil
			}
		} else {
			err = atomicfile.Write(path, content)
		}
		if err != nil {
			s.log.WithError(err).WithField("file", path).Warn("checkpoint not written")
		}
	}
}
