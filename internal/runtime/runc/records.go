package runc

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runc/pause"
)

// sandboxRecord is what CreateSandbox writes; with the pause process's
// liveness it is the whole state of a sandbox.
type sandboxRecord struct {
	ID        string                `json:"id"`
	Config    runtime.SandboxConfig `json:"config"`
	Pause     pause.Process         `json:"pause"`
	CreatedAt time.Time             `json:"createdAt"`
	// Shm is the pod's /dev/shm mount ("": none, the pod is on the host's IPC).
	Shm string `json:"shm,omitempty"`
	// CgroupParent is the pod's cgroup, cgroupfs style.
	CgroupParent string `json:"cgroupParent"`
	// SELinux are the pod's labels, whose MCS level its containers share.
	SELinux seLabels `json:"selinux,omitzero"`
}

// containerRecord is what CreateContainer writes and StartContainer
// completes.
type containerRecord struct {
	ID        string                  `json:"id"`
	SandboxID string                  `json:"sandboxID"`
	PodUID    string                  `json:"podUID"`
	Namespace string                  `json:"namespace"`
	PodName   string                  `json:"podName"`
	Config    runtime.ContainerConfig `json:"config"`
	ImageID   string                  `json:"imageID"`
	// StopSignal is the image's, else SIGTERM.
	StopSignal string    `json:"stopSignal,omitempty"`
	CgroupPath string    `json:"cgroupPath"`
	CreatedAt  time.Time `json:"createdAt"`
	StartedAt  time.Time `json:"startedAt,omitzero"`
	// ImageMounts are the image volumes' mount points in the bundle,
	// unmounted with the container.
	ImageMounts []string `json:"imageMounts,omitempty"`
	// MountDir holds its root filesystem's and image volumes' mount points
	// where they are not in the bundle: below Options.RunDir, for a pod in
	// a user namespace of its own.
	MountDir string `json:"mountDir,omitempty"`
	// IDMapped are the idmapped clones of its bind mounts' sources, in
	// MountDir, for a pod in a user namespace of its own; unmounted with the
	// container.
	IDMapped []string `json:"idmapped,omitempty"`
	// Init is the container's process and Monitor its conmon, once runc
	// created it.
	Init    pause.Process `json:"init"`
	Monitor pause.Process `json:"monitor"`
	// StartError is why the start failed: the container then shows as
	// ended, having never run.
	StartError string `json:"startError,omitempty"`
	// SELinux are the container's labels; OwnLevel says their MCS level is
	// not the pod's, and is given back with the container.
	SELinux  seLabels `json:"selinux,omitzero"`
	OwnLevel bool     `json:"ownLevel,omitempty"`
}

const (
	sandboxFile   = "sandbox.json"
	containerFile = "container.json"
)

func newID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// writeJSON replaces path whole: a reader sees the old record or the new.
func writeJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: %w", filepath.Base(filepath.Dir(path)), runtime.ErrNotFound)
		}
		return err
	}
	return json.Unmarshal(data, v)
}

func (b *Backend) readSandbox(id string) (*sandboxRecord, error) {
	var r sandboxRecord
	if err := readJSON(filepath.Join(b.sandboxDir(id), sandboxFile), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (b *Backend) readContainer(id string) (*containerRecord, error) {
	var r containerRecord
	if err := readJSON(filepath.Join(b.bundle(id), containerFile), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (b *Backend) writeContainer(r *containerRecord) error {
	return writeJSON(filepath.Join(b.bundle(r.ID), containerFile), r)
}

// ids lists the objects under dir ("s" or "c") that have a record.
func (b *Backend) ids(dir, file string) []string {
	entries, _ := os.ReadDir(filepath.Join(b.opts.Root, dir))
	var out []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(b.opts.Root, dir, e.Name(), file)); err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// owned reports whether labels belong to this backend's owner.
func (b *Backend) owned(labels map[string]string) bool {
	return b.opts.Owner == "" || labels[runtime.LabelOwner] == b.opts.Owner
}
