package cgroups

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"golang.org/x/sys/unix"
)

// podPrefix is where runlet's pod cgroups are, below each hierarchy's root.
const podPrefix = "/runlet/pod"

// PodCgroupPath is a pod's own cgroup: "/runlet/pod<uid>", the UID's dashes
// as underscores, the kubelet's cgroupfs name for it, so that what looks
// for a pod's cgroup by its UID finds it.
func PodCgroupPath(uid string) string {
	return podPrefix + strings.ReplaceAll(uid, "-", "_")
}

// IsPodCgroupPath reports whether path is a pod cgroup PodCgroupPath names.
func IsPodCgroupPath(path string) bool {
	rest, ok := strings.CutPrefix(path, podPrefix)
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// PodCgroup is a pod's own cgroup, which runlet makes, sets and removes as
// the kubelet's pod cgroup manager does; the backend's runtime puts the
// pod's containers (podman: its own pod cgroup) below it.
type PodCgroup struct {
	// Root is where the hierarchies are mounted (Root).
	Root string
	// Path is the cgroup below each hierarchy's root.
	Path string
	Host Host
}

// Make makes the cgroup with the pod's limits, in the hierarchies they
// are in.
func (c PodCgroup) Make(r runtime.Resources) error {
	if r.CPUMillis != 0 || r.MemoryBytes != 0 || r.CPUShares != 0 {
		if err := c.Update(r); err != nil {
			return err
		}
	}
	if r.PidsLimit <= 0 {
		return nil
	}
	dir := filepath.Join(c.Root, "pids", c.Path)
	if c.Host.V2 {
		dir = filepath.Join(c.Root, c.Path)
		c.enableControllers()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("making the pod cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatInt(r.PidsLimit, 10)), 0o644); err != nil {
		return fmt.Errorf("setting the pod's process limit: %w", err)
	}
	return nil
}

// Update writes the pod's CPU and memory limits, every one stated.
func (c PodCgroup) Update(r runtime.Resources) error {
	for _, d := range c.dirs() {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("making the pod cgroup: %w", err)
		}
	}
	if c.Host.V2 {
		c.enableControllers()
	}
	return WritePod(c.Root, c.Path, c.Host, UpdateResources(r, c.Host))
}

// Dirs are the cgroup's directories where it exists: in the CPU and
// memory hierarchies (v1), or its one cgroup (v2).
func (c PodCgroup) Dirs() []string {
	var out []string
	for _, d := range c.dirs() {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// Remove removes the cgroup from every hierarchy it is in, and first the
// cgroups below, named relative to it, with theirs: a removed pod's own
// cgroup, which podman can leave behind empty. A cgroup still in use (a
// process, or another cgroup below it) stays.
func (c PodCgroup) Remove(below ...string) {
	for _, d := range everyHierarchy(c.Root, c.Path) {
		for _, b := range below {
			removeTree(filepath.Join(d, b))
		}
		rmdir(d)
	}
}

// Destroy kills every process in the cgroup below each hierarchy
// mounted at root, and in the cgroups below it, then removes them all, as
// the kubelet's pod cgroup manager destroys the cgroup of a pod that is
// gone. It names what stays.
func Destroy(root, cgroup string) error {
	dirs := everyHierarchy(root, cgroup)
	for _, d := range dirs {
		killTree(d)
	}
	var left []string
	for _, d := range dirs {
		removeTree(d)
		if _, err := os.Stat(d); err == nil {
			left = append(left, d)
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("cgroup %s is still in use: %s", cgroup, strings.Join(left, ", "))
	}
	return nil
}

// everyHierarchy is the cgroup's directory in each v1 hierarchy mounted at
// root, then its v2 directory: only those that exist are removed.
func everyHierarchy(root, cgroup string) []string {
	dirs, _ := filepath.Glob(filepath.Join(root, "*", cgroup))
	return append(dirs, filepath.Join(root, cgroup))
}

// killTree sends SIGKILL to the processes in dir and the cgroups below it.
func killTree(dir string) {
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		return nil
	})
}

// removeTree removes dir and the directories below it, deepest first.
func removeTree(dir string) {
	var tree []string
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			tree = append(tree, p)
		}
		return nil
	})
	for i := len(tree) - 1; i >= 0; i-- {
		rmdir(tree[i])
	}
}

// rmdir removes a cgroup. One whose last process has just died can still
// be busy for a moment, so an empty one is tried again for about 300 ms,
// as runc's libcontainer does.
func rmdir(dir string) {
	delay := 10 * time.Millisecond
	for try := 0; ; try++ {
		err := unix.Rmdir(dir)
		if !errors.Is(err, unix.EBUSY) || try == 4 || hasSubdir(dir) {
			return
		}
		time.Sleep(delay)
		delay *= 2
	}
}

func hasSubdir(dir string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			return true
		}
	}
	return false
}

// dirs are the cgroup's directories its CPU and memory limits are in.
func (c PodCgroup) dirs() []string {
	if c.Host.V2 {
		return []string{filepath.Join(c.Root, c.Path)}
	}
	return []string{filepath.Join(c.Root, "cpu", c.Path), filepath.Join(c.Root, "memory", c.Path)}
}

// enableControllers lets the cgroups below the pod cgroup's ancestors use
// cpu, memory and pids (cgroup v2 hands controllers down level by level).
func (c PodCgroup) enableControllers() {
	const on = "+cpu +memory +pids"
	dir := c.Root
	for _, part := range strings.Split(strings.Trim(filepath.Dir(c.Path), "/"), "/") {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(on), 0o644)
		if part == "" {
			break
		}
		dir = filepath.Join(dir, part)
	}
	_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(on), 0o644)
	_ = os.WriteFile(filepath.Join(c.Root, c.Path, "cgroup.subtree_control"), []byte(on), 0o644)
}
