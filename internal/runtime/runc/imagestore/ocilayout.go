package imagestore

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// The annotations that name an image in an OCI layout: containerd's full
// name, and the OCI ref name, which may also be a bare tag.
const (
	annotationImageName = "io.containerd.image.name"
	annotationRefName   = "org.opencontainers.image.ref.name"
)

// loadLayout adds every image an OCI layout's index lists; from a nested
// index (a multi-platform image) it takes the store's platform.
func (s *Store) loadLayout(ctx context.Context, dir string) ([]string, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	ii, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	im, err := ii.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, desc := range im.Manifests {
		img, err := s.layoutImage(ii, desc)
		if err != nil {
			return out, fmt.Errorf("%s: %w", desc.Digest, err)
		}
		names, err := layoutNames(desc.Annotations)
		if err != nil {
			return out, err
		}
		id, err := s.add(ctx, img, names)
		if err != nil {
			return out, fmt.Errorf("%s: %w", desc.Digest, err)
		}
		if len(names) == 0 {
			names = []string{id}
		}
		out = append(out, names...)
	}
	return out, nil
}

func (s *Store) layoutImage(ii v1.ImageIndex, desc v1.Descriptor) (v1.Image, error) {
	if !desc.MediaType.IsIndex() {
		return ii.Image(desc.Digest)
	}
	child, err := ii.ImageIndex(desc.Digest)
	if err != nil {
		return nil, err
	}
	cm, err := child.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, m := range cm.Manifests {
		if m.Platform != nil && m.Platform.Satisfies(s.opts.Platform) && m.MediaType.IsImage() {
			return child.Image(m.Digest)
		}
	}
	return nil, fmt.Errorf("no image for %s", s.opts.Platform)
}

// layoutNames reads an image's name from its annotations. A bare ref name
// ("latest", "1.0") is only a tag, of no repository: such an image is
// loaded by its ID alone.
func layoutNames(ann map[string]string) ([]string, error) {
	n := ann[annotationImageName]
	if r := ann[annotationRefName]; n == "" && strings.ContainsAny(r, "/:@") {
		n = r
	}
	if n == "" {
		return nil, nil
	}
	norm, err := normalize(n)
	if err != nil {
		return nil, err
	}
	return []string{norm}, nil
}

// loadLayoutTar unpacks a tarred OCI layout under tmp and loads it from
// there: go-containerregistry reads a layout from a directory.
func (s *Store) loadLayoutTar(ctx context.Context, path string) ([]string, error) {
	dir, err := os.MkdirTemp(s.tmpDir(), "layout-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := extractPlain(path, dir); err != nil {
		return nil, err
	}
	return s.loadLayout(ctx, dir)
}

// extractPlain writes a tar's directories and regular files under dir, and
// nothing else: an OCI layout needs no links, and without them no name can
// lead outside dir.
func extractPlain(path, dir string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return err
		}
		if err := extractPlainEntry(tr, hdr, dir); err != nil {
			return fmt.Errorf("%s: %w", hdr.Name, err)
		}
	}
}

func extractPlainEntry(r io.Reader, hdr *tar.Header, dir string) error {
	rel, err := cleanPath(hdr.Name)
	if err != nil {
		return err
	}
	p := filepath.Join(dir, rel)
	switch hdr.Typeflag {
	case tar.TypeDir:
		return os.MkdirAll(p, 0o700)
	case tar.TypeReg:
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return nil
}
