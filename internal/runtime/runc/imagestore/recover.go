package imagestore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// recover reads the index and makes it and the disk agree after a crash:
// what was under way in tmp is dropped, a layer directory the index does
// not name was never recorded (the crash came between its rename and the
// index write) and goes, and an image whose layer is gone is forgotten, so
// the next EnsureImage pulls it again.
func (s *Store) recover() error {
	idx, err := readIndex(s.indexPath())
	if err != nil {
		return err
	}
	s.idx = idx
	if err := os.RemoveAll(s.tmpDir()); err != nil {
		return err
	}
	if err := os.Mkdir(s.tmpDir(), 0o700); err != nil {
		return err
	}
	if err := s.dropUnknownLayerDirs(); err != nil {
		return err
	}
	if s.forgetMissingLayers() {
		s.changed()
		return s.save()
	}
	return nil
}

func (s *Store) dropUnknownLayerDirs() error {
	entries, err := os.ReadDir(filepath.Join(s.root, "layers"))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, ok := s.idx.Layers["sha256:"+e.Name()]; ok {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.root, "layers", e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// forgetMissingLayers drops the records of layers whose directory is gone,
// and of the images that use them; it reports whether it dropped any.
func (s *Store) forgetMissingLayers() bool {
	dropped := false
	for d := range s.idx.Layers {
		if validDiffID(d) != nil || missing(s.layerDir(d)) {
			delete(s.idx.Layers, d)
			dropped = true
		}
	}
	for id, im := range s.idx.Images {
		for _, d := range im.Layers {
			if _, ok := s.idx.Layers[d]; !ok {
				s.forgetImageLocked(id)
				dropped = true
				break
			}
		}
	}
	return dropped
}

// forgetImageLocked removes an image's record and every name pointing at it.
func (s *Store) forgetImageLocked(id string) {
	delete(s.idx.Images, id)
	for n, target := range s.idx.Names {
		if target == id {
			delete(s.idx.Names, n)
		}
	}
}

func missing(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}
