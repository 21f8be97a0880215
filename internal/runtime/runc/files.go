package runc

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/conmon"
)

// ContainerFiles are the container's log and writable layer.
func (b *Backend) ContainerFiles(_ context.Context, id string) (runtime.ContainerFiles, error) {
	if _, err := b.readContainer(id); err != nil {
		return runtime.ContainerFiles{}, err
	}
	bundle := b.bundle(id)
	return runtime.ContainerFiles{LogPath: logPath(bundle), RootfsDir: filepath.Join(bundle, "upper")}, nil
}

// ReopenContainerLog has conmon write to a new file at the log's path.
func (b *Backend) ReopenContainerLog(_ context.Context, id string) error {
	return conmon.ReopenLog(b.bundle(id))
}

// EnsureImage makes the image present in the store.
func (b *Backend) EnsureImage(ctx context.Context, image string, policy runtime.PullPolicy, creds []runtime.Credential) (string, error) {
	return b.images.EnsureImage(ctx, image, policy, creds)
}

// ImageUser is the image's USER.
func (b *Backend) ImageUser(ctx context.Context, image string) (string, error) {
	return b.images.ImageUser(ctx, image)
}

// ImageSize is the sum of the image's layers.
func (b *Backend) ImageSize(ctx context.Context, image string) (uint64, error) {
	return b.images.ImageSize(ctx, image)
}

// LoadImage loads a docker-archive or OCI-layout tarball into the store.
func (b *Backend) LoadImage(ctx context.Context, archive io.Reader) ([]string, error) {
	f, err := os.CreateTemp(b.opts.Root, "load-*.tar")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, err = io.Copy(f, archive)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("loading an image: %w", err)
	}
	return b.images.Load(ctx, f.Name())
}
