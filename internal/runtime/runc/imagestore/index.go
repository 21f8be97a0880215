package imagestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

const indexVersion = 1

// index is everything the store knows, as it is kept in index.json.
type index struct {
	Version int                     `json:"version"`
	Names   map[string]string       `json:"names"`  // normalized name → image ID
	Images  map[string]*imageRecord `json:"images"` // image ID (manifest digest) → image
	Layers  map[string]*layerRecord `json:"layers"` // diffID → unpacked layer
}

type imageRecord struct {
	ConfigDigest string    `json:"configDigest"`
	Config       Config    `json:"config"`
	Layers       []string  `json:"layers"` // diffIDs, base first
	LastUsed     time.Time `json:"lastUsed"`
}

type layerRecord struct {
	// Size is the bytes of the layer's regular files, each hardlinked
	// file once: what it holds on disk, near enough for GC.
	Size uint64 `json:"size"`
}

func newIndex() *index {
	return &index{
		Version: indexVersion,
		Names:   map[string]string{},
		Images:  map[string]*imageRecord{},
		Layers:  map[string]*layerRecord{},
	}
}

func (s *Store) indexPath() string { return filepath.Join(s.root, "index.json") }

func readIndex(path string) (*index, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newIndex(), nil
	}
	if err != nil {
		return nil, err
	}
	idx := newIndex()
	if err := json.Unmarshal(b, idx); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if idx.Version != indexVersion {
		return nil, fmt.Errorf("%s has version %d; this runlet reads %d", path, idx.Version, indexVersion)
	}
	return idx, nil
}

// changed is called under mu after every change to idx that save must write.
func (s *Store) changed() { s.gen++ }

// save writes the index as it is now. The encoding happens under mu and
// the writing outside it, so lookups never wait for a disk; a save that
// finds a later state already written has nothing left to do.
func (s *Store) save() error {
	s.mu.Lock()
	gen := s.gen
	b, err := json.Marshal(s.idx)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	if gen <= s.saved {
		return nil
	}
	if err := writeFileAtomic(s.indexPath(), s.tmpDir(), b); err != nil {
		return fmt.Errorf("writing the image index: %w", err)
	}
	s.saved = gen
	return nil
}

// writeFileAtomic replaces path with data so that a crash leaves either
// the old file or the new one, never a part.
func writeFileAtomic(path, tmpDir string, data []byte) error {
	f, err := os.CreateTemp(tmpDir, "index-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a rename into dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
