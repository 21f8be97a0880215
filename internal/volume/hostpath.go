package volume

import (
	"errors"
	"fmt"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// setUpHostPath checks a hostPath against its type as the kubelet's hostPath
// plugin does (with its messages), creating it for the OrCreate types. An
// unset type checks nothing; a path that does not exist then becomes a
// directory, as the CRI runtimes the kubelet drives make it (podman would
// refuse to bind a missing source).
func setUpHostPath(src *v1.HostPathVolumeSource) error {
	if err := validatePathNoBacksteps(src.Path); err != nil {
		return fmt.Errorf("invalid HostPath `%s`: %v", src.Path, err)
	}
	t := v1.HostPathUnset
	if src.Type != nil {
		t = *src.Type
	}
	if t == v1.HostPathUnset {
		if _, err := os.Stat(src.Path); errors.Is(err, os.ErrNotExist) {
			return os.MkdirAll(src.Path, 0755)
		}
		return nil
	}
	return checkHostPathType(src.Path, t)
}

// checkHostPathType is the kubelet's checkTypeInternal.
func checkHostPathType(path string, t v1.HostPathType) error {
	switch t {
	case v1.HostPathDirectoryOrCreate:
		if !exists(path) {
			return makeDir(path)
		}
		return typeMatchedOrError(path, v1.HostPathDirectory, "directory")
	case v1.HostPathDirectory:
		return typeMatchedOrError(path, v1.HostPathDirectory, "directory")
	case v1.HostPathFileOrCreate:
		if !exists(path) {
			return makeFile(path)
		}
		return typeMatchedOrError(path, v1.HostPathFile, "file")
	case v1.HostPathFile:
		return typeMatchedOrError(path, v1.HostPathFile, "file")
	case v1.HostPathSocket:
		return typeMatchedOrError(path, v1.HostPathSocket, "socket file")
	case v1.HostPathCharDev:
		return typeMatchedOrError(path, v1.HostPathCharDev, "character device")
	case v1.HostPathBlockDev:
		return typeMatchedOrError(path, v1.HostPathBlockDev, "block device")
	}
	return fmt.Errorf("%s is an invalid volume type", t)
}

func typeMatchedOrError(path string, want v1.HostPathType, expected string) error {
	got, err := fileType(path)
	if err != nil {
		return fmt.Errorf("hostPath type check failed, %s is not a %s, unable to determine its type: %w", path, expected, err)
	}
	if got != want {
		return fmt.Errorf("hostPath type check failed: %s is not a %s, it's a %s", path, expected, got)
	}
	return nil
}

var errUnknownFileType = errors.New("only recognise file, directory, socket, block device and character device")

// fileType is the kubelet's hostutil getFileType.
func fileType(path string) (v1.HostPathType, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("path %q does not exist", path)
	}
	if err != nil {
		return "", err
	}
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		return v1.HostPathDirectory, nil
	case mode.IsRegular():
		return v1.HostPathFile, nil
	case mode&os.ModeSocket != 0:
		return v1.HostPathSocket, nil
	case mode&os.ModeDevice != 0 && mode&os.ModeCharDevice != 0:
		return v1.HostPathCharDev, nil
	case mode&os.ModeDevice != 0:
		return v1.HostPathBlockDev, nil
	}
	return "", errUnknownFileType
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func makeDir(path string) error {
	if err := os.MkdirAll(path, 0755); err != nil && !os.IsExist(err) {
		return err
	}
	return nil
}

func makeFile(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE, 0644)
	if f != nil {
		f.Close()
	}
	if err != nil && !os.IsExist(err) {
		return err
	}
	return nil
}

// validatePathNoBacksteps is the kubelet's: no ".." element.
func validatePathNoBacksteps(p string) error {
	for _, item := range strings.Split(p, "/") {
		if item == ".." {
			return errors.New("must not contain '..'")
		}
	}
	return nil
}
