package podconfig

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

func next(t *testing.T, c *Config) PodUpdate {
	t.Helper()
	select {
	case u := <-c.Updates():
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("no update")
		return PodUpdate{}
	}
}

func TestConfigSourcesReady(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New(ctx, record.NewFakeRecorder(10))
	api, file := c.Channel(APISource), c.Channel(FileSource)
	if c.SeenAllSources() {
		t.Fatal("SeenAllSources before any snapshot")
	}
	api <- nil
	if u := next(t, c); u.Op != ADD || u.Source != APISource || len(u.Pods) != 0 {
		t.Fatalf("update = %+v; want the empty ADD of api", u)
	}
	if c.SeenAllSources() {
		t.Fatal("SeenAllSources with the file source unseen")
	}
	file <- []*v1.Pod{mkPod("f", "static")}
	if u := next(t, c); u.Op != ADD || u.Source != FileSource || len(u.Pods) != 1 ||
		u.Pods[0].Annotations[ConfigSourceAnnotation] != FileSource {
		t.Fatalf("update = %+v; want the ADD of the file pod", u)
	}
	if !c.SeenAllSources() {
		t.Fatal("SeenAllSources false after every source reported")
	}
	if got := c.Sources(); len(got) != 2 {
		t.Errorf("Sources = %v", got)
	}
}

func TestIsStaticIsMirror(t *testing.T) {
	cases := []struct {
		ann            map[string]string
		static, mirror bool
	}{
		{map[string]string{}, false, false},
		{map[string]string{ConfigSourceAnnotation: APISource}, false, false},
		{map[string]string{ConfigSourceAnnotation: FileSource}, true, false},
		{map[string]string{ConfigSourceAnnotation: HTTPSource}, true, false},
		{map[string]string{ConfigMirrorAnnotation: "h"}, false, true},
	}
	for _, tc := range cases {
		p := mkPod("u", "p")
		p.Annotations = tc.ann
		if IsStatic(p) != tc.static || IsMirror(p) != tc.mirror {
			t.Errorf("%v: IsStatic=%v IsMirror=%v; want %v %v", tc.ann, IsStatic(p), IsMirror(p), tc.static, tc.mirror)
		}
	}
}
