package imagestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

var errEscapes = errors.New("the path leaves the layer")

// cleanPath makes a tar entry's name relative to the layer's root ("" for
// the root). A leading "/" is dropped, as tar and Docker do; a name that
// climbs out with ".." is refused, since no image builder writes one.
func cleanPath(name string) (string, error) {
	rel := path.Clean(strings.TrimLeft(name, "/"))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", errEscapes
	}
	if rel == "." {
		return "", nil
	}
	return rel, nil
}

// mkParents makes the directories of dir that this layer lacks. A parent
// must be a directory of this layer: never a symlink, which could lead a
// write out of the layer. A parent this layer whited out becomes a new,
// opaque directory, as its listing would have been.
func (u *unpacker) mkParents(dir string) error {
	rel := ""
	for _, c := range splitPath(dir) {
		rel = path.Join(rel, c)
		p := filepath.Join(u.root, rel)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = os.Mkdir(p, 0o755)
		case err != nil:
		case u.whiteouts[rel]:
			err = u.replaceWhiteout(rel)
		case !fi.IsDir():
			err = fmt.Errorf("%s is not a directory in this layer", rel)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (u *unpacker) replaceWhiteout(rel string) error {
	p := filepath.Join(u.root, rel)
	delete(u.whiteouts, rel)
	if err := os.Remove(p); err != nil {
		return err
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		return err
	}
	return u.setOpaque(p)
}

// checkParents checks that dir is reached through directories of this
// layer alone, none of them a symlink.
func (u *unpacker) checkParents(dir string) error {
	rel := ""
	for _, c := range splitPath(dir) {
		rel = path.Join(rel, c)
		fi, err := os.Lstat(filepath.Join(u.root, rel))
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory in this layer", rel)
		}
	}
	return nil
}

func splitPath(dir string) []string {
	dir = strings.Trim(dir, "/")
	if dir == "" || dir == "." {
		return nil
	}
	return strings.Split(dir, "/")
}
