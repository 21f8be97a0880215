package imagestore

import (
	"fmt"
	"regexp"
	"slices"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Image is one image the store holds.
type Image struct {
	// ID is the digest of the image's manifest ("sha256:…").
	ID string
	// Names are the normalized names that point at it
	// ("docker.io/library/busybox:latest"), sorted; none for an image a
	// name has moved away from.
	Names  []string
	Config Config
	// LayerDirs are its layers' directories, base first; an overlay mount
	// lists them the other way round in lowerdir.
	LayerDirs []string
	// Size is the sum of its layers' sizes, shared layers included.
	Size     uint64
	LastUsed time.Time
}

// Config is what the image's config says about running it: what the OCI
// spec builder and the runAsNonRoot check read.
type Config struct {
	User       string            `json:"user,omitempty"`
	Env        []string          `json:"env,omitempty"`
	Entrypoint []string          `json:"entrypoint,omitempty"`
	Cmd        []string          `json:"cmd,omitempty"`
	WorkingDir string            `json:"workingDir,omitempty"`
	StopSignal string            `json:"stopSignal,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
}

func configFrom(cf *v1.ConfigFile) Config {
	c := cf.Config
	return Config{
		User:       c.User,
		Env:        slices.Clone(c.Env),
		Entrypoint: slices.Clone(c.Entrypoint),
		Cmd:        slices.Clone(c.Cmd),
		WorkingDir: c.WorkingDir,
		StopSignal: c.StopSignal,
		Labels:     c.Labels,
	}
}

// imageLocked builds the Image of a record; names is the index's names
// inverted (image ID → names).
func (s *Store) imageLocked(id string, names map[string][]string) Image {
	rec := s.idx.Images[id]
	im := Image{ID: id, Names: names[id], Config: rec.Config, LastUsed: rec.LastUsed}
	for _, d := range rec.Layers {
		im.LayerDirs = append(im.LayerDirs, s.layerDir(d))
		im.Size += s.idx.Layers[d].Size
	}
	return im
}

// namesLocked inverts the index's names, each image's sorted.
func (s *Store) namesLocked() map[string][]string {
	out := map[string][]string{}
	for n, id := range s.idx.Names {
		out[id] = append(out[id], n)
	}
	for _, ns := range out {
		slices.Sort(ns)
	}
	return out
}

var sha256Hex = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// validDiffID accepts only sha256 digests: a diffID names a directory, and
// comes from an image's config, which anybody may have written.
func validDiffID(d string) error {
	if !sha256Hex.MatchString(d) {
		return fmt.Errorf("layer diffID %q is not a sha256 digest", d)
	}
	return nil
}
