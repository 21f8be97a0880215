package volume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// TearDownPod undoes SetUpPod once the pod's containers are gone: tmpfs
// and subPath mounts are unmounted, the volume directories removed, the
// pod's watches and tokens dropped. The pod's directory itself (with its
// per-container files) goes with CleanupPodDirs once the pod is deleted.
// HostPath and persistent volumes' contents are never touched.
func (m *Manager) TearDownPod(uid types.UID) error {
	m.forget(uid)
	podDir := m.cfg.Dirs.Pod(string(uid))
	if err := m.unmountAll(podDir); err != nil {
		return err
	}
	var errs []error
	for _, dir := range []string{m.cfg.Dirs.Volumes(string(uid)), m.cfg.Dirs.VolumeSubpaths(string(uid)), filepath.Join(podDir, "plugins")} {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CleanupPodDirs removes the directories of pods that keep says are gone,
// as the kubelet's cleanupOrphanedPodDirs: also those of pods deleted while
// runlet was not running. A directory with a mount left below it is kept.
// release, when set, runs for each pod first, so that a crash before the
// directory goes leaves the mark of a pod to clean up.
func (m *Manager) CleanupPodDirs(keep func(uid string) bool, release func(uid string)) error {
	uids, err := m.cfg.Dirs.PodUIDs()
	if err != nil {
		return err
	}
	var errs []error
	for _, uid := range uids {
		if keep(uid) {
			continue
		}
		m.forget(types.UID(uid))
		if release != nil {
			release(uid)
		}
		dir := m.cfg.Dirs.Pod(uid)
		if err := m.unmountAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		m.cfg.Log.WithField("podUID", uid).Info("removed the directory of a pod that is gone")
	}
	return errors.Join(errs...)
}

// forget drops what the manager holds for the pod: its state, its objects'
// references and its tokens.
func (m *Manager) forget(uid types.UID) {
	m.ForgetObjects(uid)
	m.mu.Lock()
	delete(m.pods, uid)
	m.mu.Unlock()
	if m.cfg.PodCertificates != nil {
		m.cfg.PodCertificates.Forget(uid)
	}
	if m.cfg.Tokens != nil {
		m.cfg.Tokens.DeleteServiceAccountToken(uid)
	}
}

// ForgetObjects drops the pod's references to its ConfigMaps and Secrets,
// which stops their watches once no other pod uses them; the volumes keep
// what they hold. Unregistering twice is harmless.
func (m *Manager) ForgetObjects(uid types.UID) {
	m.mu.Lock()
	pv := m.pods[uid]
	m.mu.Unlock()
	if pv == nil || pv.pod == nil {
		return
	}
	if m.cfg.ConfigMaps != nil {
		m.cfg.ConfigMaps.UnregisterPod(pv.pod)
	}
	if m.cfg.Secrets != nil {
		m.cfg.Secrets.UnregisterPod(pv.pod)
	}
}

// unmountAll unmounts every mount below dir, deepest first, and makes sure
// none is left: removing a directory with a bind mount below it would
// remove what the mount shows (a hostPath's files).
func (m *Manager) unmountAll(dir string) error {
	for attempt := 0; ; attempt++ {
		points, err := m.mountsBelow(dir)
		if err != nil {
			return err
		}
		if len(points) == 0 {
			return nil
		}
		if attempt == 3 {
			return fmt.Errorf("mounts left below %s: %s", dir, strings.Join(points, ", "))
		}
		for _, p := range points {
			if err := m.mounter.Unmount(p); err != nil {
				m.cfg.Log.WithError(err).WithField("path", p).Warn("unmount failed")
			}
		}
	}
}

// mountsBelow lists the mount points below dir, deepest first.
func (m *Manager) mountsBelow(dir string) ([]string, error) {
	mps, err := m.mounter.List()
	if err != nil {
		return nil, err
	}
	prefix := filepath.Clean(dir) + "/"
	var out []string
	for _, mp := range mps {
		if strings.HasPrefix(mp.Path, prefix) {
			out = append(out, mp.Path)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}
