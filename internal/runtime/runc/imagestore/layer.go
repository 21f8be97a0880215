package imagestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sys/unix"
)

// ensureLayer makes the layer's directory present, unpacking it once
// however many images and pulls want it at the same time.
func (s *Store) ensureLayer(ctx context.Context, l v1.Layer, diffID string) error {
	if s.hasLayer(diffID) {
		return nil
	}
	_, err := s.layers.do(ctx, diffID, func(ctx context.Context) (struct{}, error) {
		if s.hasLayer(diffID) { // a flight that ended between the check and this one
			return struct{}{}, nil
		}
		size, err := s.unpackLayer(ctx, l, diffID)
		if err != nil {
			return struct{}{}, fmt.Errorf("layer %s: %w", diffID, err)
		}
		s.mu.Lock()
		s.idx.Layers[diffID] = &layerRecord{Size: size}
		s.changed()
		s.mu.Unlock()
		return struct{}{}, s.save()
	})
	return err
}

func (s *Store) hasLayer(diffID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.idx.Layers[diffID]
	return ok
}

// unpackLayer unpacks into a directory of its own under tmp, checks the
// content against the diffID, and only then renames it into place: a crash,
// a broken download or a forged layer never leaves a part of a layer where
// images look.
func (s *Store) unpackLayer(ctx context.Context, l v1.Layer, diffID string) (uint64, error) {
	dir, err := os.MkdirTemp(s.tmpDir(), "layer-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return 0, err
	}
	size, err := s.unpackVerified(ctx, l, diffID, dir)
	if err != nil {
		return 0, err
	}
	if err := syncFS(dir); err != nil {
		return 0, err
	}
	final := s.layerDir(diffID)
	if err := os.Rename(dir, final); err != nil {
		return 0, err
	}
	return size, syncDir(filepath.Dir(final))
}

// unpackVerified unpacks the layer's uncompressed tar into dir while
// hashing it, to the very end: the padding after the tar's end counts
// toward the diffID too.
func (s *Store) unpackVerified(ctx context.Context, l v1.Layer, diffID, dir string) (uint64, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	h := sha256.New()
	r := io.TeeReader(ctxReader{ctx: ctx, r: rc}, h)
	u := &unpacker{root: dir, owners: s.owners, opaque: s.opaque}
	size, err := u.unpack(r)
	if err != nil {
		return 0, err
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return 0, err
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != diffID {
		return 0, fmt.Errorf("the layer's content has the diffID %s", got)
	}
	return size, nil
}

// syncFS makes a whole unpacked tree durable with one call, rather than one
// fsync per file, before it is renamed into place.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}

// ctxReader ends a read of a layer once ctx ends: a pull nobody waits for
// any more stops downloading.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
