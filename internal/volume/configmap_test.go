package volume

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func configMapVolume(name, cm string, items ...v1.KeyToPath) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: cm}, Items: items, DefaultMode: int32p(0644)}}}
}

// TestConfigMapAllKeys: every key, data and binaryData, as a file with the
// default mode, in a 0777 directory on disk, behind the ..data symlink.
func TestConfigMapAllKeys(t *testing.T) {
	e := newTestEnv(t)
	e.objs.putConfigMap(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"},
		Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"bin": {0xff, 0x00}}})
	vol := configMapVolume("v", "cfg")
	vol.ConfigMap.DefaultMode = int32p(0400)
	pod := testPod(vol)
	e.setUp(pod)
	dir := e.volumeDir(pod, configMapPlugin, "v")
	if got := visible(t, dir); !reflect.DeepEqual(got, []string{"a", "b", "bin"}) {
		t.Fatalf("files %v", got)
	}
	if e.read(dir, "a") != "1" || e.read(dir, "bin") != "\xff\x00" {
		t.Errorf("contents a=%q bin=%q", e.read(dir, "a"), e.read(dir, "bin"))
	}
	if m := e.mode(dir, "a"); m != 0400 {
		t.Errorf("mode of a = %o, want 0400", m)
	}
	if target, err := os.Readlink(filepath.Join(dir, "a")); err != nil || target != "..data/a" {
		t.Errorf("a -> %q (%v), want ..data/a", target, err)
	}
	if m := e.mode(dir, "."); m != 0777 {
		t.Errorf("volume dir mode %o, want 0777", m)
	}
	if len(e.tmpfsMounts()) != 0 {
		t.Errorf("a configMap volume was put on tmpfs")
	}
	if mv, ok := e.m.volume(pod.UID, "v"); !ok || !mv.readOnly || mv.path != dir {
		t.Errorf("volume state %+v: want read-only at %s", mv, dir)
	}
}

// TestConfigMapItems: only the listed keys, at their paths (subdirectories
// too), with their own modes.
func TestConfigMapItems(t *testing.T) {
	e := newTestEnv(t)
	e.objs.putConfigMap(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"},
		Data: map[string]string{"a": "1", "b": "2", "c": "3"}})
	pod := testPod(configMapVolume("v", "cfg",
		v1.KeyToPath{Key: "a", Path: "path/to/a"},
		v1.KeyToPath{Key: "b", Path: "b-file", Mode: int32p(0400)}))
	e.setUp(pod)
	dir := e.volumeDir(pod, configMapPlugin, "v")
	if got := visible(t, dir); !reflect.DeepEqual(got, []string{"b-file", "path"}) {
		t.Fatalf("files %v", got)
	}
	if e.read(dir, "path/to/a") != "1" || e.mode(dir, "path/to/a") != 0644 || e.mode(dir, "b-file") != 0400 {
		t.Errorf("path/to/a %q mode %o, b-file mode %o", e.read(dir, "path/to/a"), e.mode(dir, "path/to/a"), e.mode(dir, "b-file"))
	}
}

// TestConfigMapMissing: a missing configMap fails the volume with the
// kubelet's message (not ready: the pod waits); an optional one is an
// empty volume; a missing key of an optional one is skipped.
func TestConfigMapMissing(t *testing.T) {
	e := newTestEnv(t)
	pod := testPod(configMapVolume("v", "absent"))
	ready, errs := e.m.SetUpPod(context.Background(), pod)
	if ready || len(errs) != 1 || errs[0].Error() != `MountVolume.SetUp failed for volume "v" : configmap "absent" not found` {
		t.Fatalf("ready=%v errs=%v", ready, errs)
	}

	e.objs.putConfigMap(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "absent"}, Data: map[string]string{"k": "v"}})
	e.setUp(pod)
	if e.read(e.volumeDir(pod, configMapPlugin, "v"), "k") != "v" {
		t.Error("the configMap created later was not projected")
	}

	opt := configMapVolume("o", "none", v1.KeyToPath{Key: "x", Path: "x"})
	opt.ConfigMap.Optional = boolp(true)
	pod = testPod(opt)
	pod.UID = "uid-2"
	e.setUp(pod)
	if got := visible(t, e.volumeDir(pod, configMapPlugin, "o")); len(got) != 0 {
		t.Errorf("optional missing configMap: files %v", got)
	}

	e.objs.putConfigMap(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nokey"}})
	pod = testPod(configMapVolume("k", "nokey", v1.KeyToPath{Key: "x", Path: "x"}))
	pod.UID = "uid-3"
	_, errs = e.m.SetUpPod(context.Background(), pod)
	if len(errs) != 1 || !strings.HasSuffix(errs[0].Error(), "configmap references non-existent config key: x") {
		t.Errorf("missing key: %v", errs)
	}
}

// TestConfigMapUpdate: a later SetUpPod (every sync) follows the configMap,
// swapping ..data to a new directory, and drops removed keys.
func TestConfigMapUpdate(t *testing.T) {
	e := newTestEnv(t)
	e.objs.putConfigMap(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: map[string]string{"a": "1", "old": "x"}})
	pod := testPod(configMapVolume("v", "cfg"))
	e.setUp(pod)
	dir := e.volumeDir(pod, configMapPlugin, "v")
	before, _ := os.Readlink(filepath.Join(dir, "..data"))

	e.objs.putConfigMap(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: map[string]string{"a": "2", "new": "y"}})
	e.setUp(pod)
	after, _ := os.Readlink(filepath.Join(dir, "..data"))
	if before == after || e.read(dir, "a") != "2" || e.read(dir, "new") != "y" {
		t.Fatalf("..data %s -> %s, a=%q", before, after, e.read(dir, "a"))
	}
	if got := visible(t, dir); !reflect.DeepEqual(got, []string{"a", "new"}) {
		t.Errorf("files after the update %v", got)
	}
	// A configMap that later disappears keeps the last content and is
	// reported, without holding the running pod back.
	e.objs.mu.Lock()
	delete(e.objs.configMaps, "ns/cfg")
	e.objs.mu.Unlock()
	ready, errs := e.m.SetUpPod(context.Background(), pod)
	if !ready || len(errs) != 1 || e.read(dir, "a") != "2" {
		t.Errorf("after deletion: ready=%v errs=%v a=%q", ready, errs, e.read(dir, "a"))
	}
}

// TestConfigMapFSGroup: the fsGroup owns the files and the directory, which
// gains setgid; files keep their mode plus group read (the volume is
// read-only), as the upstream "defaultMode and fsGroup set" specs expect.
func TestConfigMapFSGroup(t *testing.T) {
	requireRoot(t)
	e := newTestEnv(t)
	e.objs.putConfigMap(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: map[string]string{"a": "1"}})
	vol := configMapVolume("v", "cfg")
	vol.ConfigMap.DefaultMode = int32p(0400)
	pod := testPod(vol)
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: int64p(1234)}
	e.setUp(pod)
	dir := e.volumeDir(pod, configMapPlugin, "v")
	if m := e.mode(dir, "a"); m != 0440 {
		t.Errorf("file mode %o, want 0440", m)
	}
	if m := e.mode(dir, "."); m != 0777|os.ModeSetgid {
		t.Errorf("dir mode %o, want 2777", m)
	}
	if gid := groupOf(t, filepath.Join(dir, "a")); gid != 1234 {
		t.Errorf("file group %d, want 1234", gid)
	}
}
