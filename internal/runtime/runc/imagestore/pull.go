package imagestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/runlet/runlet/internal/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// pull resolves name at its registry and adds the image it finds. Pulls of
// one name with the same credentials share one; pulls with other
// credentials do not (one pod must neither get an image through another's
// login nor fail for want of it), but still share the layer downloads.
func (s *Store) pull(ctx context.Context, name string, creds []runtime.Credential) (string, error) {
	return s.pulls.do(ctx, pullKey(name, creds), func(ctx context.Context) (string, error) {
		img, err := s.fetch(ctx, name, creds)
		if err != nil {
			return "", err
		}
		return s.add(ctx, img, []string{name})
	})
}

// fetch gets the image's manifest, trying creds in order as the kubelet
// does: the first the registry takes wins, and a failure reports every
// credential's error. The layers come later, through the same login.
func (s *Store) fetch(ctx context.Context, image string, creds []runtime.Credential) (v1.Image, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, auth := range authenticators(creds) {
		img, err := remote.Image(ref, s.remoteOptions(ctx, auth)...)
		if err == nil {
			return img, nil
		}
		errs = append(errs, fmt.Errorf("pulling: %w", err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, utilerrors.NewAggregate(errs)
}

func (s *Store) remoteOptions(ctx context.Context, auth authn.Authenticator) []remote.Option {
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuth(auth),
		remote.WithPlatform(s.opts.Platform),
	}
	if s.opts.Transport != nil {
		opts = append(opts, remote.WithTransport(s.opts.Transport))
	}
	return opts
}

func authenticators(creds []runtime.Credential) []authn.Authenticator {
	if len(creds) == 0 {
		return []authn.Authenticator{authn.Anonymous}
	}
	out := make([]authn.Authenticator, 0, len(creds))
	for _, c := range creds {
		out = append(out, authn.FromConfig(authn.AuthConfig{Username: c.Username, Password: c.Password}))
	}
	return out
}

// pullKey names a pull by image and credentials, with the credentials
// hashed so that no password sits in a map key.
func pullKey(image string, creds []runtime.Credential) string {
	h := sha256.New()
	for _, c := range creds {
		fmt.Fprintf(h, "%q %q %q\n", c.Server, c.Username, c.Password)
	}
	return image + "\x00" + hex.EncodeToString(h.Sum(nil))
}
