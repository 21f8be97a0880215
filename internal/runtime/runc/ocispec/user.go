package ocispec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
)

// processUser is who the process runs as, as containerd's CRI decides it:
// RunAsUser, else the image's user (by name when Username says so); the
// group is RunAsGroup, else the image's, else the user's own in the image's
// /etc/passwd, else root. The additional groups are the primary one, the
// user's memberships in the image's /etc/group (Kubernetes' default Merge
// policy), then the pod's supplemental groups.
func processUser(rootfs string, s runtime.SecurityConfig, imageUser string) (specs.User, error) {
	db := userDB{root: rootfs}
	userPart, groupPart := s.Username, ""
	if s.RunAsUser != nil {
		userPart = strconv.FormatInt(*s.RunAsUser, 10)
	} else if userPart == "" {
		userPart, groupPart, _ = strings.Cut(imageUser, ":")
	}
	u, err := db.user(userPart)
	if err != nil {
		return specs.User{}, err
	}
	gid := u.gid
	switch {
	case s.RunAsGroup != nil:
		if gid, err = toID(*s.RunAsGroup); err != nil {
			return specs.User{}, fmt.Errorf("runAsGroup: %w", err)
		}
	case groupPart != "":
		if gid, err = db.group(groupPart); err != nil {
			return specs.User{}, err
		}
	}
	groups, err := additionalGroups(db, u.name, gid, s.SupplementalGroups)
	if err != nil {
		return specs.User{}, err
	}
	return specs.User{UID: u.uid, GID: gid, AdditionalGids: groups}, nil
}

// additionalGroups lists each group once, in the order containerd gives.
func additionalGroups(db userDB, name string, gid uint32, supplemental []int64) ([]uint32, error) {
	groups := []uint32{gid}
	member, err := db.memberOf(name)
	if err != nil {
		return nil, err
	}
	groups = append(groups, member...)
	for _, g := range supplemental {
		id, err := toID(g)
		if err != nil {
			return nil, fmt.Errorf("supplemental group: %w", err)
		}
		groups = append(groups, id)
	}
	var out []uint32
	for _, g := range groups {
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out, nil
}

// toID refuses IDs a kernel cannot hold; the core has validated them
// already, this keeps a conversion from wrapping.
func toID(v int64) (uint32, error) {
	if v < 0 || v > math.MaxUint32 {
		return 0, fmt.Errorf("ID %d out of range", v)
	}
	return uint32(v), nil
}

// parseID reads a numeric user or group.
func parseID(s string) (uint32, bool) {
	v, err := strconv.ParseUint(s, 10, 32)
	return uint32(v), err == nil
}
