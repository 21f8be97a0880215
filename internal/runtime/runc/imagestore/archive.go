package imagestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// loadArchive adds the images of a docker-archive tarball, each under all
// of its RepoTags.
func (s *Store) loadArchive(ctx context.Context, path string) ([]string, error) {
	opener := func() (io.ReadCloser, error) { return os.Open(path) }
	manifest, err := tarball.LoadManifest(opener)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range manifest {
		img, names, err := archiveImage(opener, d, len(manifest))
		if err != nil {
			return out, err
		}
		id, err := s.add(ctx, img, names)
		if err != nil {
			return out, fmt.Errorf("%s: %w", d.Config, err)
		}
		if len(names) == 0 {
			names = []string{id}
		}
		out = append(out, names...)
	}
	return out, nil
}

// archiveImage opens one image of an archive of count, by its first tag:
// go-containerregistry finds an image in a tarball by a tag, or takes the
// only one there is.
func archiveImage(opener tarball.Opener, d tarball.Descriptor, count int) (v1.Image, []string, error) {
	names := make([]string, 0, len(d.RepoTags))
	for _, t := range d.RepoTags {
		n, err := normalize(t)
		if err != nil {
			return nil, nil, err
		}
		names = append(names, n)
	}
	var tag *name.Tag
	if len(d.RepoTags) > 0 {
		t, err := name.NewTag(d.RepoTags[0])
		if err != nil {
			return nil, nil, err
		}
		tag = &t
	} else if count > 1 {
		return nil, nil, errors.New("an image without a tag in an archive of several cannot be told apart")
	}
	img, err := tarball.Image(opener, tag)
	return img, names, err
}
