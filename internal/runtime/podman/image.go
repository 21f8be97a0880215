package podman

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/runlet/runlet/internal/runtime"
)

// EnsureImage makes image available under policy and returns its ID.
// Images under "localhost/" are local by podman's convention (imported or
// built here, never pullable), so Always behaves as IfNotPresent for them.
func (b *Backend) EnsureImage(ctx context.Context, image string, policy runtime.PullPolicy, creds []runtime.Credential) (string, error) {
	if policy == runtime.PullAlways && strings.HasPrefix(image, "localhost/") {
		policy = runtime.PullIfNotPresent
	}
	if policy != runtime.PullAlways {
		img, err := b.client.InspectImage(ctx, image)
		if err == nil {
			return img.ID, nil
		}
		if !errors.Is(err, runtime.ErrNotFound) {
			return "", wrapf(err, "inspecting image %s", image)
		}
		if policy == runtime.PullNever {
			return "", fmt.Errorf("image %s is not present and the pull policy is Never: %w", image, runtime.ErrImageNotFound)
		}
	}
	id, err := b.client.Pull(ctx, image, pickAuth(image, creds))
	if err != nil {
		return "", fmt.Errorf("%w: %w", runtime.ErrImageNotFound, err)
	}
	return id, nil
}

// pickAuth chooses the credential for the image's registry.
func pickAuth(image string, creds []runtime.Credential) *RegistryAuth {
	reg := registryOf(image)
	for _, c := range creds {
		if normRegistry(c.Server) == reg {
			return &RegistryAuth{Username: c.Username, Password: c.Password, ServerAddress: c.Server}
		}
	}
	return nil
}

// registryOf returns the registry host of a reference, as Docker decides it:
// the first component counts only if it looks like a host.
func registryOf(image string) string {
	first, _, found := strings.Cut(image, "/")
	if !found || !strings.ContainsAny(first, ".:") && first != "localhost" {
		return "docker.io"
	}
	return normRegistry(first)
}

func normRegistry(s string) string {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	s, _, _ = strings.Cut(s, "/")
	switch s {
	case "index.docker.io", "registry-1.docker.io", "":
		return "docker.io"
	}
	return s
}

// ImageUser is the USER of a present image's config ("" when it sets none).
func (b *Backend) ImageUser(ctx context.Context, image string) (string, error) {
	img, err := b.client.InspectImage(ctx, image)
	if errors.Is(err, runtime.ErrNotFound) {
		return "", fmt.Errorf("image %s: %w", image, runtime.ErrImageNotFound)
	}
	if err != nil {
		return "", wrapf(err, "inspecting image %s", image)
	}
	return img.Config.User, nil
}
