package volume

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// TestHostPathTypes: the kubelet's type checks and their messages.
func TestHostPathTypes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct {
		path string
		typ  v1.HostPathType
		want string // error; "" for none
	}{
		{dir, v1.HostPathDirectory, ""},
		{file, v1.HostPathDirectory, "hostPath type check failed: " + file + " is not a directory, it's a File"},
		{filepath.Join(dir, "new/dir"), v1.HostPathDirectoryOrCreate, ""},
		{file, v1.HostPathFile, ""},
		{filepath.Join(dir, "nofile"), v1.HostPathFile, "hostPath type check failed, " + filepath.Join(dir, "nofile") +
			" is not a file, unable to determine its type: path \"" + filepath.Join(dir, "nofile") + "\" does not exist"},
		{filepath.Join(dir, "created"), v1.HostPathFileOrCreate, ""},
		{sock, v1.HostPathSocket, ""},
		{dir, v1.HostPathSocket, "hostPath type check failed: " + dir + " is not a socket file, it's a Directory"},
		{"/dev/null", v1.HostPathCharDev, ""},
		{"/dev/null", v1.HostPathBlockDev, "hostPath type check failed: /dev/null is not a block device, it's a CharDevice"},
		{dir + "/a/../b", v1.HostPathDirectoryOrCreate, "invalid HostPath `" + dir + "/a/../b`: must not contain '..'"},
	} {
		typ := tc.typ
		err := setUpHostPath(&v1.HostPathVolumeSource{Path: tc.path, Type: &typ})
		if got := errString(err); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.typ, tc.path, got, tc.want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "new/dir")); err != nil || !fi.IsDir() {
		t.Errorf("DirectoryOrCreate did not create a directory: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "created")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("FileOrCreate did not create a file: %v", err)
	}
	// Unset type: checked nothing, but a missing path becomes a directory
	// (podman cannot bind a missing source).
	if err := setUpHostPath(&v1.HostPathVolumeSource{Path: filepath.Join(dir, "unset")}); err != nil || !exists(filepath.Join(dir, "unset")) {
		t.Errorf("unset type: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestClaims: a claim bound to a hostPath or local volume mounts that path;
// an unbound claim waits; other volume types are refused, naming them.
func TestClaims(t *testing.T) {
	e := newTestEnv(t)
	dir := t.TempDir()
	claim := func(name, volume string, phase v1.PersistentVolumeClaimPhase) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("c-" + name)},
			Spec: v1.PersistentVolumeClaimSpec{VolumeName: volume}, Status: v1.PersistentVolumeClaimStatus{Phase: phase}}
	}
	pv := func(name, claim string, src v1.PersistentVolumeSource) *v1.PersistentVolume {
		return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: src, ClaimRef: &v1.ObjectReference{UID: types.UID("c-" + claim)}}}
	}
	e.m.cfg.Client = fake.NewClientset(
		claim("hp", "pv-hp", v1.ClaimBound), pv("pv-hp", "hp", v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir}}),
		claim("local", "pv-local", v1.ClaimBound), pv("pv-local", "local", v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: dir}}),
		claim("pending", "", v1.ClaimPending),
		claim("csi", "pv-csi", v1.ClaimBound), pv("pv-csi", "csi", v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "d"}}),
	)
	vol := func(name string, ro bool) v1.Volume {
		return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name, ReadOnly: ro}}}
	}
	pod := testPod(vol("hp", false), vol("local", true), vol("pending", false), vol("csi", false))
	ready, errs := e.m.SetUpPod(context.Background(), pod)
	if ready || len(errs) != 2 ||
		errs[0].Error() != `MountVolume.SetUp failed for volume "pending" : error processing PVC ns/pending: PVC is not bound` ||
		errs[1].Error() != `MountVolume.SetUp failed for volume "csi" : persistentVolume pv-csi: runlet does not support csi volumes` {
		t.Fatalf("ready=%v errs=%v", ready, errs)
	}
	if mv, ok := e.m.volume(pod.UID, "hp"); !ok || mv.path != dir || mv.readOnly {
		t.Errorf("hostPath claim: %+v", mv)
	}
	if mv, ok := e.m.volume(pod.UID, "local"); !ok || mv.path != dir || !mv.readOnly {
		t.Errorf("read-only local claim: %+v", mv)
	}
}
