package runtimefake

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// LoadImage implements runtime.Images: the archive's image names become
// present, as a docker-archive's manifest lists them.
func (f *Fake) LoadImage(_ context.Context, archive io.Reader) ([]string, error) {
	data, err := io.ReadAll(archive)
	if err != nil {
		return nil, err
	}
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return nil, fmt.Errorf("reading the archive's manifest: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for _, d := range m {
		for _, tag := range d.RepoTags {
			names = append(names, tag)
			delete(f.missing, tag)
			if f.images != nil {
				f.images[tag] = true
			}
		}
	}
	return names, nil
}
