package podman

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"

	"github.com/distribution/reference"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// EnsureImage makes image available under policy and returns its ID.
// Images under "localhost/" are local by podman's convention (imported or
// built here, never pullable), so Always behaves as IfNotPresent for them.
func (b *Backend) EnsureImage(ctx context.Context, image string, policy runtime.PullPolicy, creds []runtime.Credential) (string, error) {
	if policy == runtime.PullAlways && strings.HasPrefix(image, "localhost/") {
		policy = runtime.PullIfNotPresent
	}
	if policy != runtime.PullAlways {
		img, err := b.inspectImage(ctx, image)
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
	id, err := b.pull(ctx, image, creds)
	b.images.forget(image) // the name may point at a new image now
	if err != nil {
		return "", &pullFailure{err: err}
	}
	return id, nil
}

// pull tries each credential in turn, as the kubelet does (the first that
// works wins; the errors of all are returned), or pulls anonymously.
func (b *Backend) pull(ctx context.Context, image string, creds []runtime.Credential) (string, error) {
	insecure := loopbackRegistry(image)
	if len(creds) == 0 {
		return b.client.Pull(ctx, image, nil, insecure)
	}
	var errs []error
	for _, c := range creds {
		auth := &libpod.RegistryAuth{Username: c.Username, Password: c.Password, ServerAddress: c.Server}
		id, err := b.client.Pull(ctx, image, auth, insecure)
		if err == nil {
			return id, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return "", utilerrors.NewAggregate(errs)
}

// pullFailure is a failed pull: it says what podman said, and is an
// ErrImageNotFound for the contract.
type pullFailure struct{ err error }

func (e *pullFailure) Error() string   { return e.err.Error() }
func (e *pullFailure) Unwrap() []error { return []error{runtime.ErrImageNotFound, e.err} }

// loopbackRegistry reports an image whose registry is on this machine's
// loopback (localhost, 127.0.0.0/8, ::1). Such a registry is reached over
// plain HTTP when it does not speak TLS, as containerd and Docker allow by
// default; podman would refuse it.
func loopbackRegistry(image string) bool {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return false
	}
	host := reference.Domain(named)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ImageSize returns the size of an image the backend holds.
func (b *Backend) ImageSize(ctx context.Context, image string) (uint64, error) {
	img, err := b.inspectImage(ctx, image)
	if err != nil {
		return 0, wrapf(err, "inspecting image %s", image)
	}
	return uint64(max(img.Size, 0)), nil
}

// inspectImage inspects an image and remembers its environment for the
// containers created from it next.
func (b *Backend) inspectImage(ctx context.Context, image string) (libpod.ImageInspect, error) {
	img, err := b.client.InspectImage(ctx, image)
	if err == nil {
		b.images.set(image, img.Config.Env)
	}
	return img, err
}

// imageEnv is the image's own environment (its ENV lines).
func (b *Backend) imageEnv(ctx context.Context, image string) ([]string, error) {
	if env, ok := b.images.get(image); ok {
		return env, nil
	}
	img, err := b.inspectImage(ctx, image)
	if err != nil {
		return nil, wrapf(err, "inspecting image %s", image)
	}
	return img.Config.Env, nil
}

// imageCache holds the environment of the images last ensured. EnsureImage
// runs before every container is created and refreshes it, so a create
// usually costs no inspect of its own.
type imageCache struct {
	mu  sync.Mutex
	env map[string][]string
}

func (c *imageCache) get(image string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	env, ok := c.env[image]
	return env, ok
}

func (c *imageCache) set(image string, env []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.env == nil {
		c.env = map[string][]string{}
	}
	c.env[image] = env
}

func (c *imageCache) forget(image string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.env, image)
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

// LoadImage implements runtime.Images through podman's image load.
func (b *Backend) LoadImage(ctx context.Context, archive io.Reader) ([]string, error) {
	names, err := b.client.LoadImage(ctx, archive)
	return names, wrapf(err, "loading an image archive")
}
