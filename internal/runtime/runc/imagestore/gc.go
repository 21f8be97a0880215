package imagestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// GC frees disk as the kubelet's image GC does. When the filesystem that
// holds the store is at least high percent used, it removes images that
// are not in use and were last used more than MinAge ago, least recently
// used first, until what they free brings the usage down to low percent.
// Then, whatever the usage, it removes every layer no image has. high=100
// turns the first part off, as the kubelet's imageGCHighThresholdPercent
// does. inUse answers for an image ID; the store's lock is not held when it
// is called. Like the kubelet, GC fails when it could not free enough.
func (s *Store) GC(ctx context.Context, inUse func(imageID string) bool, high, low int) error {
	if high < 0 || high > 100 || low < 0 || low > high {
		return fmt.Errorf("image GC thresholds high=%d low=%d: want 0 <= low <= high <= 100", high, low)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	want, err := s.toFree(high, low)
	if err != nil {
		return fmt.Errorf("image GC: %w", err)
	}
	freed, trash := s.collect(want, s.usedImages(inUse))
	if err := s.save(); err != nil {
		return fmt.Errorf("image GC: %w", err)
	}
	if err := removeAll(trash); err != nil {
		return fmt.Errorf("image GC: %w", err)
	}
	if freed < want {
		return fmt.Errorf("image GC: wanted to free %d bytes, but only %d bytes were not in use", want, freed)
	}
	return nil
}

// toFree is how many bytes must go to bring the usage from high to low.
func (s *Store) toFree(high, low int) (uint64, error) {
	capacity, available, err := s.usage(s.root)
	if err != nil || capacity == 0 || high == 100 {
		return 0, err
	}
	if usage := 100 - int(available*100/capacity); usage < high {
		return 0, nil
	}
	target := capacity * uint64(100-low) / 100 // what is available at low
	if available >= target {
		return 0, nil
	}
	return target - available, nil
}

// usedImages asks inUse about every image, without the store's lock: the
// backend answering may take locks of its own.
func (s *Store) usedImages(inUse func(string) bool) map[string]bool {
	s.mu.Lock()
	ids := make([]string, 0, len(s.idx.Images))
	for id := range s.idx.Images {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	used := map[string]bool{}
	for _, id := range ids {
		used[id] = inUse(id)
	}
	return used
}

// collect removes images until want bytes are freed, then every layer no
// image has, and returns the bytes freed and the directories to remove.
// Layers that an add under way has pinned stay.
func (s *Store) collect(want uint64, used map[string]bool) (uint64, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	refs := s.layerRefsLocked()
	var freed uint64
	for d, rec := range s.idx.Layers {
		if refs[d] == 0 && s.pins[d] == 0 {
			freed += rec.Size
		}
	}
	for _, id := range s.victimsLocked(used) {
		if freed >= want {
			break
		}
		freed += s.dropImageLocked(id, refs)
	}
	return freed, s.trashOrphansLocked(refs)
}

func (s *Store) layerRefsLocked() map[string]int {
	refs := map[string]int{}
	for _, im := range s.idx.Images {
		for _, d := range im.Layers {
			refs[d]++
		}
	}
	return refs
}

// victimsLocked are the images GC may remove, least recently used first.
// used may lack an image added since it was made: such an image is new,
// and MinAge or its place at the end of the order keeps it.
func (s *Store) victimsLocked(used map[string]bool) []string {
	var ids []string
	now := s.now()
	for id, im := range s.idx.Images {
		if used[id] || now.Sub(im.LastUsed) < s.opts.MinAge {
			continue
		}
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := s.idx.Images[a].LastUsed.Compare(s.idx.Images[b].LastUsed); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return ids
}

// dropImageLocked forgets an image and returns the bytes of the layers
// that no image has any more.
func (s *Store) dropImageLocked(id string, refs map[string]int) uint64 {
	var freed uint64
	for _, d := range s.idx.Images[id].Layers {
		if refs[d]--; refs[d] == 0 && s.pins[d] == 0 {
			freed += s.idx.Layers[d].Size
		}
	}
	s.forgetImageLocked(id)
	s.changed()
	return freed
}

// trashOrphansLocked forgets the layers no image has and moves their
// directories into tmp, from where they are removed without the lock; a
// pull that needs such a layer again meanwhile unpacks it anew. A layer
// whose directory will not move stays recorded.
func (s *Store) trashOrphansLocked(refs map[string]int) []string {
	var trash []string
	for d := range s.idx.Layers {
		if refs[d] > 0 || s.pins[d] > 0 {
			continue
		}
		to := filepath.Join(s.tmpDir(), "gc-"+strings.TrimPrefix(d, "sha256:"))
		if err := os.Rename(s.layerDir(d), to); err != nil {
			continue
		}
		delete(s.idx.Layers, d)
		s.changed()
		trash = append(trash, to)
	}
	return trash
}

func removeAll(dirs []string) error {
	var errs []error
	for _, d := range dirs {
		errs = append(errs, os.RemoveAll(d))
	}
	return errors.Join(errs...)
}
