// Package poddir names what runlet keeps for each pod under --root-dir. The
// layout is the kubelet's (pods/<uid>/volumes/<plugin>/<name>, .../etc-hosts,
// .../containers/<name>/...), so an operator who knows one knows the other.
package poddir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Dirs is the pod layout under one root directory.
type Dirs struct {
	Root string
}

// New returns the layout under root.
func New(root string) Dirs { return Dirs{Root: root} }

// Pods is the directory that holds every pod's directory.
func (d Dirs) Pods() string { return filepath.Join(d.Root, "pods") }

// Pod is one pod's directory.
func (d Dirs) Pod(uid string) string { return filepath.Join(d.Pods(), uid) }

// Volumes holds the pod's volumes, one directory per plugin.
func (d Dirs) Volumes(uid string) string { return filepath.Join(d.Pod(uid), "volumes") }

// Volume is where one volume of the pod is prepared. plugin is the kubelet's
// plugin name ("kubernetes.io/configmap"); its slash becomes "~" as on disk.
func (d Dirs) Volume(uid, plugin, name string) string {
	return filepath.Join(d.Volumes(uid), EscapePlugin(plugin), name)
}

// VolumePlugin holds a plugin's own files about one volume of the pod
// (pods/<uid>/plugins/<plugin>/<name>: the emptyDir "ready" marker).
func (d Dirs) VolumePlugin(uid, plugin, name string) string {
	return filepath.Join(d.Pod(uid), "plugins", EscapePlugin(plugin), name)
}

// VolumeSubpaths holds the bind sources the pod's subPath mounts use.
func (d Dirs) VolumeSubpaths(uid string) string { return filepath.Join(d.Pod(uid), "volume-subpaths") }

// Container holds per-container files (termination message files).
func (d Dirs) Container(uid, name string) string {
	return filepath.Join(d.Pod(uid), "containers", name)
}

// EtcHosts is the pod's kubelet-managed /etc/hosts.
func (d Dirs) EtcHosts(uid string) string { return filepath.Join(d.Pod(uid), "etc-hosts") }

// ResolvConf is the pod's resolv.conf.
func (d Dirs) ResolvConf(uid string) string { return filepath.Join(d.Pod(uid), "resolv.conf") }

// EscapePlugin turns a plugin name into its directory name.
func EscapePlugin(plugin string) string { return strings.ReplaceAll(plugin, "/", "~") }

// PodUIDs lists the pods that have a directory.
func (d Dirs) PodUIDs() ([]string, error) {
	entries, err := os.ReadDir(d.Pods())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
