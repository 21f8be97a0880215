package imagestore

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Load adds the images of a docker-archive tarball (docker save, podman
// save), an OCI layout directory, or a tarball of one (gzipped or not),
// and returns what it loaded them as: their normalized names, or the ID of
// an image that comes without a name.
func (s *Store) Load(ctx context.Context, path string) ([]string, error) {
	names, err := s.load(ctx, path)
	if err != nil {
		return names, fmt.Errorf("loading %s: %w", path, err)
	}
	return names, nil
}

func (s *Store) load(ctx context.Context, path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return s.loadLayout(ctx, path)
	}
	path, done, err := s.gunzipped(path)
	if err != nil {
		return nil, err
	}
	defer done()
	has, err := tarHas(path, "manifest.json", "oci-layout")
	switch {
	case err != nil:
		return nil, err
	case has["manifest.json"]: // docker save since 25 writes both; its tags are in manifest.json
		return s.loadArchive(ctx, path)
	case has["oci-layout"]:
		return s.loadLayoutTar(ctx, path)
	}
	return nil, errors.New("neither a docker archive nor an OCI layout")
}

// gunzipped returns a plain tar of path: path itself, or a decompressed
// copy under tmp, which done removes. The tar readers below read the
// archive several times over; gzip cannot seek.
func (s *Store) gunzipped(path string) (string, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	magic, _ := br.Peek(2)
	if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return path, func() {}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return "", nil, err
	}
	out, err := os.CreateTemp(s.tmpDir(), "load-*.tar")
	if err != nil {
		return "", nil, err
	}
	done := func() { _ = os.Remove(out.Name()) }
	_, err = io.Copy(out, zr)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		done()
		return "", nil, err
	}
	return out.Name(), done, nil
}

// tarHas reports which of names the tar at path has at its top.
func tarHas(path string, names ...string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	has := map[string]bool{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return has, nil
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return nil, err
		}
		rel, _ := cleanPath(hdr.Name)
		if slices.Contains(names, rel) {
			has[rel] = true
		}
		if len(has) == len(names) {
			return has, nil
		}
	}
}
