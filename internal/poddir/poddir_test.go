package poddir

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestLayout(t *testing.T) {
	d := New("/var/lib/runlet")
	cases := map[string]string{
		d.Volume("u1", "kubernetes.io/configmap", "cfg"): "/var/lib/runlet/pods/u1/volumes/kubernetes.io~configmap/cfg",
		d.Container("u1", "app"):                         "/var/lib/runlet/pods/u1/containers/app",
		d.EtcHosts("u1"):                                 "/var/lib/runlet/pods/u1/etc-hosts",
		d.VolumeSubpaths("u1"):                           "/var/lib/runlet/pods/u1/volume-subpaths",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

func TestPodUIDs(t *testing.T) {
	d := New(t.TempDir())
	if uids, err := d.PodUIDs(); err != nil || len(uids) != 0 {
		t.Fatalf("no pods dir: %v, %v", uids, err)
	}
	for _, uid := range []string{"a", "b"} {
		if err := os.MkdirAll(d.Pod(uid), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d.Pods(), "stray"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	uids, err := d.PodUIDs()
	if err != nil || !reflect.DeepEqual(uids, []string{"a", "b"}) {
		t.Fatalf("got %v, %v", uids, err)
	}
}
