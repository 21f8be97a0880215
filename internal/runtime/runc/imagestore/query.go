package imagestore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/runlet/runlet/internal/runtime"
)

// Image returns the image a reference (name, ID, or name with digest)
// means; a missing one is an error wrapping runtime.ErrImageNotFound.
func (s *Store) Image(image string) (Image, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.lookupLocked(image)
	if !ok {
		return Image{}, &imageError{image: image, cause: errNotPresent}
	}
	return s.imageLocked(id, s.namesLocked()), nil
}

// Images returns every image the store holds, by ID.
func (s *Store) Images() []Image {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := s.namesLocked()
	out := make([]Image, 0, len(s.idx.Images))
	for id := range s.idx.Images {
		out = append(out, s.imageLocked(id, names))
	}
	slices.SortFunc(out, func(a, b Image) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// ImageUser is the USER of a present image's config ("" when it sets none).
func (s *Store) ImageUser(_ context.Context, image string) (string, error) {
	im, err := s.Image(image)
	return im.Config.User, err
}

// ImageSize is a present image's size: the sum of its layers' sizes.
func (s *Store) ImageSize(_ context.Context, image string) (uint64, error) {
	im, err := s.Image(image)
	return im.Size, err
}

// MarkUsed records that image (a name or an ID) is used now, for GC's
// least-recently-used order; EnsureImage records it too. The time reaches
// the disk with the next index write or Close, not at once: a use is too
// frequent to cost a write each.
func (s *Store) MarkUsed(image string) {
	s.use(image)
}

// use marks a present image used and returns its ID.
func (s *Store) use(image string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.lookupLocked(image)
	if ok {
		s.idx.Images[id].LastUsed = s.now()
	}
	return id, ok
}

// imageError is a missing image or a failed pull: it names the image and
// the cause, and is a runtime.ErrImageNotFound for the backend contract.
type imageError struct {
	image string
	cause error
}

func (e *imageError) Error() string { return fmt.Sprintf("image %s: %v", e.image, e.cause) }
func (e *imageError) Unwrap() []error {
	return []error{runtime.ErrImageNotFound, e.cause}
}

var errNotPresent = errors.New("not present in the image store")
