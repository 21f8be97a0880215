package stats

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/runtime"
	"golang.org/x/sys/unix"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// ephemeralPlugins are the volume plugins whose volumes live in the pod's
// directory, as the kubelet's du-measured volumes do (emptyDir and the
// volumes built on it). Others (claims, local volumes) are not the pod's
// ephemeral storage.
var ephemeralPlugins = []string{
	"kubernetes.io/empty-dir", "kubernetes.io/configmap", "kubernetes.io/secret",
	"kubernetes.io/downward-api", "kubernetes.io/projected", "kubernetes.io/git-repo",
}

// files caches where each container keeps its log and writable layer:
// neither moves while the container exists, so it is inspected once.
type files struct {
	mu   sync.Mutex
	byID map[string][2]string
}

func (f *files) get(ctx context.Context, src runtime.Files, id string) (logPath, rootfs string) {
	f.mu.Lock()
	p, ok := f.byID[id]
	f.mu.Unlock()
	if ok {
		return p[0], p[1]
	}
	cf, err := src.ContainerFiles(ctx, id)
	if err != nil {
		return "", "" // asked again next time
	}
	logPath, rootfs = cf.LogPath, cf.RootfsDir
	f.mu.Lock()
	f.byID[id] = [2]string{logPath, rootfs}
	f.mu.Unlock()
	return logPath, rootfs
}

// keep forgets the containers not in ids.
func (f *files) keep(ids map[string]bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := range f.byID {
		if !ids[id] {
			delete(f.byID, id)
		}
	}
}

// containerDisk fills a container's rootfs and logs figures.
func (c *Collector) containerDisk(ctx context.Context, cs *statsv1alpha1.ContainerStats, id string, now time.Time) {
	if c.cfg.Files == nil {
		return
	}
	logPath, rootfs := c.files.get(ctx, c.cfg.Files, id)
	if rootfs != "" {
		if u, err := diskUsage(rootfs); err == nil {
			cs.Rootfs = usedFs(fsStats(rootfs, now), u)
		}
	}
	if logPath != "" {
		rotated, _ := filepath.Glob(logPath + ".*")
		if u, ok := filesUsage(append([]string{logPath}, rotated...)...); ok {
			cs.Logs = usedFs(fsStats(logPath, now), u)
		}
	}
}

// filesUsage is the disk the files take; false when none exists. A
// container's log counts with its rotated files beside it.
func filesUsage(paths ...string) (usageInfo, bool) {
	var u usageInfo
	for _, p := range paths {
		var st unix.Stat_t
		if unix.Stat(p, &st) != nil {
			continue
		}
		u.Bytes += st.Blocks * 512
		u.Inodes++
	}
	return u, u.Inodes > 0
}

// podVolumes measures the pod's volumes under its directory, and returns
// what they take of the node filesystem: a volume on a mount of its own (a
// tmpfs) takes none.
func (c *Collector) podVolumes(uid string, now time.Time) ([]statsv1alpha1.VolumeStats, usageInfo) {
	var out []statsv1alpha1.VolumeStats
	var onNodeFs usageInfo
	if c.cfg.Dirs.Root == "" {
		return nil, onNodeFs
	}
	podDev, ok := device(c.cfg.Dirs.Pod(uid))
	if !ok {
		return nil, onNodeFs
	}
	for _, plugin := range ephemeralPlugins {
		dir := filepath.Join(c.cfg.Dirs.Volumes(uid), poddir.EscapePlugin(plugin))
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			u, err := diskUsage(path)
			if err != nil {
				continue
			}
			vs := statsv1alpha1.VolumeStats{Name: e.Name()}
			if fs := usedFs(fsStats(path, now), u); fs != nil {
				vs.FsStats = *fs
			}
			out = append(out, vs)
			if dev, ok := device(path); ok && dev == podDev {
				onNodeFs.Bytes += u.Bytes
				onNodeFs.Inodes += u.Inodes
			}
		}
	}
	return out, onNodeFs
}

// podEphemeral is the kubelet's calcEphemeralStorage: the containers'
// writable layers and logs, the pod's volumes on the node filesystem, and
// its /etc/hosts.
func (c *Collector) podEphemeral(pod *statsv1alpha1.PodStats, volumes usageInfo, now time.Time) {
	fs := fsStats(c.cfg.NodeFsPath, now)
	if fs == nil {
		return
	}
	used := volumes
	for _, cs := range pod.Containers {
		if cs.Rootfs == nil {
			continue
		}
		used.Bytes += int64(deref(cs.Rootfs.UsedBytes))
		used.Inodes += int64(deref(cs.Rootfs.InodesUsed))
		if cs.Logs != nil {
			used.Bytes += int64(deref(cs.Logs.UsedBytes))
			used.Inodes += int64(deref(cs.Logs.InodesUsed))
		}
	}
	if c.cfg.Dirs.Root != "" {
		if u, ok := filesUsage(c.cfg.Dirs.EtcHosts(pod.PodRef.UID)); ok {
			used.Bytes += u.Bytes
			used.Inodes += u.Inodes
		}
	}
	pod.EphemeralStorage = usedFs(fs, used)
}

// usedFs sets a measured usage on the figures of the filesystem holding it.
func usedFs(fs *statsv1alpha1.FsStats, u usageInfo) *statsv1alpha1.FsStats {
	if fs == nil {
		return nil
	}
	fs.UsedBytes = ptr(uint64(u.Bytes))
	fs.InodesUsed = ptr(uint64(u.Inodes))
	return fs
}

func device(path string) (uint64, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, false
	}
	return st.Dev, true
}
