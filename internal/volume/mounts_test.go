package volume

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	mount "k8s.io/mount-utils"
)

func mountsPod() *v1.Pod {
	pod := testPod(
		v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		configMapVolume("cfg", "cfg"),
	)
	return pod
}

// TestContainerMounts: each volumeMount is a bind of its volume; configMap
// volumes are read-only whatever the mount says; propagation is passed on;
// the volumes runlet makes are to be relabelled for SELinux, a host path not.
func TestContainerMounts(t *testing.T) {
	e := newTestEnv(t)
	e.objs.putConfigMap(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}})
	pod := mountsPod()
	host := t.TempDir()
	pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: host}}})
	e.setUp(pod)
	h2c := v1.MountPropagationHostToContainer
	c := &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		{Name: "data", MountPath: "/ro", ReadOnly: true, MountPropagation: &h2c},
		{Name: "cfg", MountPath: "/etc/cfg"},
		{Name: "host", MountPath: "/host"},
	}}
	got, err := e.m.ContainerMounts(pod, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, cfg := e.volumeDir(pod, emptyDirPlugin, "data"), e.volumeDir(pod, configMapPlugin, "cfg")
	want := []runtime.Mount{
		{HostPath: data, ContainerPath: "/data", Propagation: "None", Relabel: true},
		{HostPath: data, ContainerPath: "/ro", ReadOnly: true, Propagation: "HostToContainer", Relabel: true},
		{HostPath: cfg, ContainerPath: "/etc/cfg", ReadOnly: true, Propagation: "None", Relabel: true},
		{HostPath: host, ContainerPath: "/host", Propagation: "None"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mounts\n got %+v\nwant %+v", got, want)
	}
	if _, err := e.m.ContainerMounts(pod, &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "nope", MountPath: "/x"}}}, nil); err == nil ||
		err.Error() != `cannot find volume "nope" to mount into container "c"` {
		t.Errorf("unknown volume: %v", err)
	}
}

// TestSubPath: subPath and subPathExpr (from the container's env) mount a
// directory of the volume, created with the volume's mode when missing;
// absolute paths, backsteps and missing variables are refused with the
// kubelet's messages.
func TestSubPath(t *testing.T) {
	e := newTestEnv(t)
	e.objs.putConfigMap(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}})
	pod := mountsPod()
	e.setUp(pod)
	data := e.volumeDir(pod, emptyDirPlugin, "data")
	env := []v1.EnvVar{{Name: "POD_NAME", Value: "p"}, {Name: "EMPTY"}}
	c := &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{
		{Name: "data", MountPath: "/a", SubPath: "a/b"},
		{Name: "data", MountPath: "/p", SubPathExpr: "logs/$(POD_NAME)"},
	}}
	got, err := e.m.ContainerMounts(pod, c, env)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].HostPath != filepath.Join(data, "a/b") || got[1].HostPath != filepath.Join(data, "logs/p") {
		t.Fatalf("subPath sources %s, %s", got[0].HostPath, got[1].HostPath)
	}
	if fi, err := os.Stat(filepath.Join(data, "a/b")); err != nil || fi.Mode().Perm() != 0777 {
		t.Errorf("created subPath: %v %v, want a 0777 directory", fi, err)
	}
	for _, tc := range []struct {
		vm   v1.VolumeMount
		want string
	}{
		{v1.VolumeMount{Name: "data", MountPath: "/x", SubPath: "/etc"}, "error SubPath `/etc` must not be an absolute path"},
		{v1.VolumeMount{Name: "data", MountPath: "/x", SubPath: "../up"}, "unable to provision SubPath `../up`: must not contain '..'"},
		{v1.VolumeMount{Name: "data", MountPath: "/x", SubPathExpr: "$(NOPE)/$(EMPTY)"}, "missing value for EMPTY, NOPE"},
	} {
		_, err := e.m.ContainerMounts(pod, &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{tc.vm}}, env)
		if errString(err) != tc.want {
			t.Errorf("%+v: %v, want %q", tc.vm, err, tc.want)
		}
	}
}

// TestSubPathEscape: a symlink in the volume cannot lead a subPath out.
func TestSubPathEscape(t *testing.T) {
	e := newTestEnv(t)
	e.m.subpather = realSubpath(e)
	pod := testPod(v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	e.setUp(pod)
	data := e.volumeDir(pod, emptyDirPlugin, "data")
	if err := os.Symlink("/", filepath.Join(data, "evil")); err != nil {
		t.Fatal(err)
	}
	_, err := e.m.ContainerMounts(pod, &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/x", SubPath: "evil/etc"}}}, nil)
	if err == nil || err.Error() != `failed to prepare subPath for volumeMount "data" of container "c"` {
		t.Fatalf("subPath through a symlink out of the volume: %v", err)
	}
}

// TestTearDown: the pod's volumes go, its references and tokens are
// dropped; its directory goes once the pod is gone, unless a mount is
// left below it.
func TestTearDown(t *testing.T) {
	e := newTestEnv(t)
	e.objs.putSecret(&v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}, Data: map[string][]byte{"k": []byte("v")}})
	pod := testPod(v1.Volume{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}})
	e.setUp(pod)
	if err := os.MkdirAll(e.m.cfg.Dirs.Container("uid-1", "c"), 0755); err != nil {
		t.Fatal(err)
	}
	if e.objs.registered["uid-1"] == 0 {
		t.Fatal("the pod's references were not registered")
	}
	if err := e.m.TearDownPod(pod.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.m.cfg.Dirs.Volumes("uid-1")); !os.IsNotExist(err) {
		t.Errorf("volumes left: %v", err)
	}
	if len(e.tmpfsMounts()) != 0 || e.objs.registered["uid-1"] != 0 || !reflect.DeepEqual(e.tokens.deleted, []types.UID{"uid-1"}) {
		t.Errorf("tmpfs %v, registered %v, tokens deleted %v", e.tmpfsMounts(), e.objs.registered, e.tokens.deleted)
	}
	if _, err := os.Stat(e.m.cfg.Dirs.Pod("uid-1")); err != nil {
		t.Errorf("the pod's directory went before the pod: %v", err)
	}

	// A directory with a mount the manager cannot remove stays.
	stuck := e.m.cfg.Dirs.Volume("uid-2", emptyDirPlugin, "v")
	if err := os.MkdirAll(stuck, 0755); err != nil {
		t.Fatal(err)
	}
	e.m.mounter = &stuckMounter{FakeMounter: mount.NewFakeMounter([]mount.MountPoint{{Path: stuck, Type: "tmpfs"}})}
	err := e.m.CleanupPodDirs(func(uid string) bool { return false }, nil)
	if err == nil || !strings.Contains(err.Error(), "mounts left below") {
		t.Errorf("CleanupPodDirs with a mount left: %v", err)
	}
	if _, err := os.Stat(stuck); err != nil {
		t.Errorf("a directory with a mount below it was removed: %v", err)
	}
	if _, err := os.Stat(e.m.cfg.Dirs.Pod("uid-1")); !os.IsNotExist(err) {
		t.Errorf("the gone pod's directory is left: %v", err)
	}
}

// stuckMounter cannot unmount.
type stuckMounter struct{ *mount.FakeMounter }

func (*stuckMounter) Unmount(string) error { return os.ErrPermission }
