package volume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/runlet/runlet/internal/envvars/expansion"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/volume/subpath"
	v1 "k8s.io/api/core/v1"
)

// ContainerMounts returns the container's volumeMounts as bind mounts of the
// pod's prepared volumes, as the kubelet's makeMounts: subPath and
// subPathExpr (expanded from the container's env) are checked, created in
// the volume when missing, and bind-mounted safely under
// pods/<uid>/volume-subpaths; read-only volumes stay read-only. The errors
// are the kubelet's (the container waits with CreateContainerConfigError).
func (m *Manager) ContainerMounts(pod *v1.Pod, c *v1.Container, env []v1.EnvVar) ([]runtime.Mount, error) {
	var out []runtime.Mount
	for i, vm := range c.VolumeMounts {
		vol, ok := m.volume(pod.UID, vm.Name)
		if !ok {
			return nil, fmt.Errorf("cannot find volume %q to mount into container %q", vm.Name, c.Name)
		}
		if vol.image != "" {
			sub, err := subPathOf(vm, env)
			if err != nil {
				return nil, err
			}
			// An image volume: the backend mounts the image (or its subPath), read-only.
			out = append(out, runtime.Mount{Image: vol.image, SubPath: sub, ContainerPath: containerPath(vm), ReadOnly: true})
			continue
		}
		hostPath, err := m.mountSource(pod, c, i, vm, vol.path, env)
		if err != nil {
			return nil, err
		}
		propagation, err := propagation(vm.MountPropagation)
		if err != nil {
			return nil, err
		}
		if vm.RecursiveReadOnly != nil && *vm.RecursiveReadOnly == v1.RecursiveReadOnlyEnabled {
			return nil, fmt.Errorf("volume %q requested recursive read-only mode, but it is not supported by the runtime", vm.Name)
		}
		out = append(out, runtime.Mount{
			HostPath: hostPath, ContainerPath: containerPath(vm),
			ReadOnly: vm.ReadOnly || vol.readOnly, Propagation: propagation, Relabel: vol.relabel,
		})
	}
	return out, nil
}

// mountSource is the host path to bind for one volumeMount: the volume, or
// its subPath prepared so that the container cannot escape the volume.
func (m *Manager) mountSource(pod *v1.Pod, c *v1.Container, index int, vm v1.VolumeMount, volumePath string, env []v1.EnvVar) (string, error) {
	sub, err := subPathOf(vm, env)
	if err != nil {
		return "", err
	}
	if sub == "" {
		return volumePath, nil
	}
	hostPath := filepath.Join(volumePath, sub)
	if _, err := os.Lstat(hostPath); errors.Is(err, os.ErrNotExist) {
		// Created now, with the volume's mode (and so its fsGroup's setgid
		// bit): left to the runtime it would get 0755 root:root.
		fi, err := os.Stat(volumePath)
		if err != nil {
			return "", err
		}
		if err := m.subpather.SafeMakeDir(sub, volumePath, fi.Mode()); err != nil && !errors.Is(err, os.ErrExist) {
			m.cfg.Log.WithError(err).WithField("pod", pod.Namespace+"/"+pod.Name).Warn("creating a subPath failed")
			return "", fmt.Errorf("failed to create subPath directory for volumeMount %q of container %q", vm.Name, c.Name)
		}
	}
	bound, _, err := m.subpather.PrepareSafeSubpath(subpath.Subpath{
		VolumeMountIndex: index, Path: hostPath, VolumeName: vm.Name, VolumePath: volumePath,
		PodDir: m.cfg.Dirs.Pod(string(pod.UID)), ContainerName: c.Name,
	})
	if err != nil {
		// The details may describe the host's file system: logged, not shown.
		m.cfg.Log.WithError(err).WithField("pod", pod.Namespace+"/"+pod.Name).Warn("preparing a subPath failed")
		return "", fmt.Errorf("failed to prepare subPath for volumeMount %q of container %q", vm.Name, c.Name)
	}
	return bound, nil
}

// expandSubPath is the kubelet's ExpandContainerVolumeMounts: $(VAR) from
// the container's env; a variable that is missing or empty is an error.
func expandSubPath(expr string, env []v1.EnvVar) (string, error) {
	vars := make(map[string]string, len(env))
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	missing := map[string]bool{}
	out := expansion.Expand(expr, func(key string) string {
		v, ok := vars[key]
		if !ok || v == "" {
			missing[key] = true
		}
		return v
	})
	if len(missing) > 0 {
		keys := make([]string, 0, len(missing))
		for k := range missing {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "", fmt.Errorf("missing value for %s", strings.Join(keys, ", "))
	}
	return out, nil
}

// propagation is the kubelet's translateMountPropagation.
func propagation(mode *v1.MountPropagationMode) (string, error) {
	if mode == nil {
		return string(v1.MountPropagationNone), nil
	}
	switch *mode {
	case v1.MountPropagationNone, v1.MountPropagationHostToContainer, v1.MountPropagationBidirectional:
		return string(*mode), nil
	}
	return "", fmt.Errorf("invalid MountPropagation mode: %q", *mode)
}

// subPathOf is the volumeMount's subPath, subPathExpr expanded, with the
// kubelet's checks: relative, and no "..".
func subPathOf(vm v1.VolumeMount, env []v1.EnvVar) (string, error) {
	sub := vm.SubPath
	if vm.SubPathExpr != "" {
		var err error
		if sub, err = expandSubPath(vm.SubPathExpr, env); err != nil {
			return "", err
		}
	}
	if sub == "" {
		return "", nil
	}
	if filepath.IsAbs(sub) {
		return "", fmt.Errorf("error SubPath `%s` must not be an absolute path", sub)
	}
	if err := validatePathNoBacksteps(sub); err != nil {
		return "", fmt.Errorf("unable to provision SubPath `%s`: %w", sub, err)
	}
	return sub, nil
}

// containerPath is the mount's path in the container, made absolute.
func containerPath(vm v1.VolumeMount) string {
	if !filepath.IsAbs(vm.MountPath) {
		return "/" + vm.MountPath
	}
	return vm.MountPath
}
