package imagestore

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"
)

// layerJobs bounds the layers of one image fetched and unpacked at once.
const layerJobs = 3

// add makes img present under names and returns its ID. An image the
// store already holds whole only gets the names; otherwise each layer the
// store lacks is unpacked (once, however many images and pulls want it),
// and the image is recorded after all of them.
func (s *Store) add(ctx context.Context, img v1.Image, names []string) (string, error) {
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	id := digest.String()
	if s.name(id, names) {
		return id, s.save()
	}
	rec, layers, err := readImage(img)
	if err != nil {
		return "", err
	}
	s.pin(rec.Layers)
	defer s.unpin(rec.Layers)
	if err := s.ensureLayers(ctx, layers, rec.Layers); err != nil {
		return "", err
	}
	s.commit(id, rec, names)
	return id, s.save()
}

// readImage reads what the index keeps of an image from its config, and
// its layers.
func readImage(img v1.Image) (*imageRecord, []v1.Layer, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the image's config: %w", err)
	}
	if cf.OS != "" && cf.OS != "linux" {
		return nil, nil, fmt.Errorf("the image is for %s, not linux", cf.OS)
	}
	cd, err := img.ConfigName()
	if err != nil {
		return nil, nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, nil, err
	}
	rec := &imageRecord{ConfigDigest: cd.String(), Config: configFrom(cf)}
	for _, l := range layers {
		d, err := l.DiffID()
		if err != nil {
			return nil, nil, err
		}
		if err := validDiffID(d.String()); err != nil {
			return nil, nil, err
		}
		rec.Layers = append(rec.Layers, d.String())
	}
	return rec, layers, nil
}

func (s *Store) ensureLayers(ctx context.Context, layers []v1.Layer, diffIDs []string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(layerJobs)
	for i, l := range layers {
		g.Go(func() error { return s.ensureLayer(ctx, l, diffIDs[i]) })
	}
	return g.Wait()
}

// name points names at an image the store holds whole, and marks it used;
// it reports false when the image must be added.
func (s *Store) name(id string, names []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.idx.Images[id]
	if !ok {
		return false
	}
	rec.LastUsed = s.now()
	for _, n := range names {
		s.idx.Names[n] = id
	}
	s.changed()
	return true
}

// commit records an image whose layers are all present. A name that
// pointed at another image moves; the other image stays, for GC.
func (s *Store) commit(id string, rec *imageRecord, names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.LastUsed = s.now()
	s.idx.Images[id] = rec
	for _, n := range names {
		s.idx.Names[n] = id
	}
	s.changed()
}

// pin keeps GC from removing layers an add is about to use: between the
// check that a layer is present and the image's record, nothing else
// refers to it.
func (s *Store) pin(diffIDs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range diffIDs {
		s.pins[d]++
	}
}

func (s *Store) unpin(diffIDs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range diffIDs {
		if s.pins[d]--; s.pins[d] <= 0 {
			delete(s.pins, d)
		}
	}
}
