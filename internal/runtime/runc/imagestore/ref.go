package imagestore

import (
	"fmt"

	"github.com/distribution/reference"
)

// normalize returns the name an image is indexed under, in the form the
// kubelet and runlet's credential lookup use: "busybox" is
// "docker.io/library/busybox:latest", and a name with a digest keeps only
// the digest.
func normalize(image string) (string, error) {
	named, err := reference.ParseDockerRef(image)
	if err != nil {
		return "", fmt.Errorf("couldn't parse image name %q: %w", image, err)
	}
	return named.String(), nil
}

// lookupLocked finds the image a reference means: an image ID
// ("sha256:…"), a name, or any name with the image's digest (a digest
// says which image, whatever repository it came from).
func (s *Store) lookupLocked(image string) (string, bool) {
	if sha256Hex.MatchString(image) {
		_, ok := s.idx.Images[image]
		return image, ok
	}
	n, err := normalize(image)
	if err != nil {
		return "", false
	}
	if id, ok := s.idx.Names[n]; ok {
		return id, true
	}
	named, _ := reference.ParseDockerRef(image)
	if d, ok := named.(reference.Digested); ok {
		id := d.Digest().String()
		_, ok := s.idx.Images[id]
		return id, ok
	}
	return "", false
}
