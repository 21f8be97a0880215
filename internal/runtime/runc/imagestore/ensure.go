package imagestore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/runlet/runlet/internal/runtime"
)

var errPullNever = errors.New("not present, and the pull policy is Never")

// EnsureImage makes image present under policy and returns its ID, as the
// backend contract's Images role says: IfNotPresent pulls only what is
// missing, Never only looks, Always asks the registry what the name means
// now (fetching only the layers the store lacks). A pull tries creds in
// order until the registry takes one, anonymously when there are none. A
// missing image and a failed pull are errors wrapping
// runtime.ErrImageNotFound.
//
// Images under "localhost/" are local, as podman has them (loaded or built
// here, never pullable), so Always means IfNotPresent for them: both
// backends then run the same images under the same policies.
func (s *Store) EnsureImage(ctx context.Context, image string, policy runtime.PullPolicy, creds []runtime.Credential) (string, error) {
	name, err := normalize(image)
	if err != nil {
		return "", &imageError{image: image, cause: err}
	}
	if policy == runtime.PullAlways && strings.HasPrefix(name, "localhost/") {
		policy = runtime.PullIfNotPresent
	}
	switch policy {
	case runtime.PullAlways:
	case runtime.PullIfNotPresent, runtime.PullNever:
		if id, ok := s.use(image); ok {
			return id, nil
		}
		if policy == runtime.PullNever {
			return "", &imageError{image: image, cause: errPullNever}
		}
	default:
		return "", fmt.Errorf("image %s: unknown pull policy %q", image, policy)
	}
	id, err := s.pull(ctx, name, creds)
	if err != nil {
		return "", &imageError{image: image, cause: err}
	}
	return id, nil
}
