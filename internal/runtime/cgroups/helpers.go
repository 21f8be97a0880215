package cgroups

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// HelperPath is the cgroup of the processes runlet starts to keep its
// pods (conmon, the pause processes): a leaf below the pods' tree, as
// podman's conmon cgroup (libpod_parent/conmon) and CRI-O's conmon_cgroup
// are. Out of runlet's own cgroup, they outlive what ends all of it: a
// supervisor's stop of runlet's service (systemd's KillMode=control-group),
// the stop of the container runlet runs in.
const HelperPath = "/runlet/helpers"

// HelperDirs are the cgroups a helper process is made in: in each
// hierarchy the host mounts below root, HelperPath, made where missing;
// but where one of own is in that hierarchy, that one (a pause process's
// pod cgroup, which its memory is charged to).
func HelperDirs(root string, own []string) ([]string, error) {
	hs, err := Hierarchies(root)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		if d, ok := ownIn(h, own); ok {
			out = append(out, d)
			continue
		}
		d := filepath.Join(h, HelperPath)
		if err := Make(h, d); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func ownIn(hierarchy string, own []string) (string, bool) {
	for _, d := range own {
		if strings.HasPrefix(d, hierarchy+"/") {
			return d, true
		}
	}
	return "", false
}

// Hierarchies are the cgroup hierarchies mounted at root: root itself on
// cgroup v2; on v1 each mounted below it (a named one such as systemd's,
// and a hybrid host's unified v2 one, included; a controller's alias link,
// such as cpu,cpuacct, left out).
func Hierarchies(root string) ([]string, error) {
	if isCgroup(root) {
		return []string{root}, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		d := filepath.Join(root, e.Name())
		if e.IsDir() && isCgroup(d) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no cgroup hierarchy is mounted at " + root)
	}
	return out, nil
}

func isCgroup(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && (st.Type == unix.CGROUP_SUPER_MAGIC || st.Type == unix.CGROUP2_SUPER_MAGIC)
}

// Make makes the cgroup dir and its parents below the hierarchy h. A new v1
// cpuset cgroup has no CPUs or memory nodes, and takes no process until
// given some: it gets its parent's, as runc's libcontainer does (v2 ones
// use their parent's while their own are empty).
func Make(h, dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if parent := filepath.Dir(dir); parent != h {
		if err := Make(h, parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if cgroup2(h) {
		return nil
	}
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		if err := inherit(dir, f); err != nil {
			return err
		}
	}
	return nil
}

// inherit copies a cpuset file from dir's parent where dir's is empty.
func inherit(dir, file string) error {
	cur, err := os.ReadFile(filepath.Join(dir, file))
	if errors.Is(err, os.ErrNotExist) || err == nil && len(bytes.TrimSpace(cur)) > 0 {
		return nil
	}
	if err != nil {
		return err
	}
	v, err := os.ReadFile(filepath.Join(filepath.Dir(dir), file))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, file), v, 0o644)
}
