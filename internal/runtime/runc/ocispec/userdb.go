package ocispec

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// userDB reads a root filesystem's /etc/passwd and /etc/group through
// os.Root, so that an image's symbolic links cannot point the lookup at the
// host's files.
type userDB struct{ root string }

// passwdUser is the part of a passwd entry a process needs.
type passwdUser struct {
	name     string
	uid, gid uint32
}

// user resolves a user part: a number is a UID, whose entry (when the
// image has one) gives the name and group; a name must have an entry.
// Empty is root.
func (db userDB) user(spec string) (passwdUser, error) {
	if spec == "" {
		spec = "0"
	}
	uid, numeric := parseID(spec)
	var found *passwdUser
	err := db.scan("etc/passwd", func(f []string) bool {
		u, ok := parsePasswd(f)
		if !ok || numeric && u.uid != uid || !numeric && u.name != spec {
			return false
		}
		found = &u
		return true
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil // an image without /etc/passwd has no entries
	}
	if err != nil {
		return passwdUser{}, fmt.Errorf("looking up user %q: %w", spec, err)
	}
	switch {
	case found != nil:
		return *found, nil
	case numeric:
		return passwdUser{uid: uid}, nil
	}
	return passwdUser{}, fmt.Errorf("unable to find user %s: no matching entries in passwd file", spec)
}

// parsePasswd reads an entry's name, UID and GID.
func parsePasswd(f []string) (passwdUser, bool) {
	if len(f) < 4 {
		return passwdUser{}, false
	}
	uid, ok := parseID(f[2])
	gid, gok := parseID(f[3])
	return passwdUser{name: f[0], uid: uid, gid: gid}, ok && gok
}

// group resolves a group part: a number is a GID, a name must have an
// entry.
func (db userDB) group(spec string) (uint32, error) {
	if gid, ok := parseID(spec); ok {
		return gid, nil
	}
	var gid uint32
	found := false
	err := db.scan("etc/group", func(f []string) bool {
		if len(f) < 3 || f[0] != spec {
			return false
		}
		gid, found = parseID(f[2])
		return found
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err != nil {
		return 0, fmt.Errorf("looking up group %q: %w", spec, err)
	}
	if !found {
		return 0, fmt.Errorf("unable to find group %s: no matching entries in group file", spec)
	}
	return gid, nil
}

// memberOf lists the groups whose member list names user; an image without
// /etc/group has none.
func (db userDB) memberOf(user string) ([]uint32, error) {
	if user == "" {
		return nil, nil
	}
	var gids []uint32
	err := db.scan("etc/group", func(f []string) bool {
		if len(f) < 4 || f[0] == user || !slices.Contains(strings.Split(f[3], ","), user) {
			return false
		}
		if gid, ok := parseID(f[2]); ok {
			gids = append(gids, gid)
		}
		return false
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return gids, err
}

// scan calls match with the colon-separated fields of each entry of the
// file until it returns true.
func (db userDB) scan(name string, match func([]string) bool) error {
	root, err := os.OpenRoot(db.root)
	if err != nil {
		return err
	}
	defer root.Close()
	f, err := root.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if match(strings.Split(line, ":")) {
			return nil
		}
	}
	return sc.Err()
}
