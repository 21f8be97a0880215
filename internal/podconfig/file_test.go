package podconfig

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// waitTimeout is generous: only correctness is asserted, never speed.
const waitTimeout = 30 * time.Second

func podYAML(name, image string) string {
	return strings.NewReplacer("web", name, "nginx:1.27", image).Replace(nginxManifest)
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func names(pods []*v1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// waitFor reads snapshots until one has exactly the wanted pod names.
func waitFor(t *testing.T, ch <-chan []*v1.Pod, want string) []*v1.Pod {
	t.Helper()
	return waitUntil(t, ch, "pods "+want, func(pods []*v1.Pod) bool { return names(pods) == want })
}

// waitUntil reads snapshots until ok accepts one.
func waitUntil(t *testing.T, ch <-chan []*v1.Pod, what string, ok func([]*v1.Pod) bool) []*v1.Pod {
	t.Helper()
	deadline := time.After(waitTimeout)
	last := "(none)"
	for {
		select {
		case pods := <-ch:
			if ok(pods) {
				return pods
			}
			last = names(pods)
		case <-deadline:
			t.Fatalf("no snapshot with %s; last had pods %q", what, last)
		}
	}
}

func image(pods []*v1.Pod, name string) string {
	for _, p := range pods {
		if p.Name == name {
			return p.Spec.Containers[0].Image
		}
	}
	return ""
}

type fileRun struct {
	ch   chan []*v1.Pod
	hook *logtest.Hook
	rec  *record.FakeRecorder
}

func startFileSource(t *testing.T, path string, period time.Duration) *fileRun {
	t.Helper()
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	r := &fileRun{ch: make(chan []*v1.Pod), hook: hook, rec: record.NewFakeRecorder(100)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunFileSource(ctx, FileSourceConfig{Path: path, NodeName: "n1", Period: period, Updates: r.ch, Log: log, Recorder: r.rec})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// TestFileSourceWatch changes files with a period of an hour, so every
// change must come through inotify.
func TestFileSourceWatch(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), podYAML("a", "nginx:1.27"))
	writeFile(t, filepath.Join(dir, ".hidden.yaml"), podYAML("hidden", "nginx:1.27"))
	r := startFileSource(t, dir, time.Hour)
	first := waitFor(t, r.ch, "a-n1")

	writeFile(t, filepath.Join(dir, "b.json"), `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`)
	waitFor(t, r.ch, "a-n1,b-n1")

	writeFile(t, filepath.Join(dir, "a.yaml"), podYAML("a", "nginx:1.28"))
	pods := waitUntil(t, r.ch, "a-n1 on nginx:1.28", func(pods []*v1.Pod) bool {
		return names(pods) == "a-n1,b-n1" && image(pods, "a-n1") == "nginx:1.28"
	})
	for _, p := range pods {
		if p.Name == "a-n1" && p.UID == first[0].UID {
			t.Errorf("a changed manifest kept UID %q", p.UID)
		}
	}

	if err := os.Remove(filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.ch, "b-n1")
}

func TestFileSourceInvalidManifestSkipped(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "good.yaml"), podYAML("good", "nginx:1.27"))
	writeFile(t, filepath.Join(dir, "bad.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: []}\n")
	writeFile(t, filepath.Join(dir, "junk.yaml"), "{{{ not yaml")
	r := startFileSource(t, dir, time.Hour)
	waitFor(t, r.ch, "good-n1")

	logged := map[string]bool{}
	for _, e := range r.hook.AllEntries() {
		if path, ok := e.Data["path"].(string); ok && e.Level == logrus.ErrorLevel {
			logged[filepath.Base(path)] = true
		}
	}
	if !logged["bad.yaml"] || !logged["junk.yaml"] {
		t.Errorf("error log lines for %v, want bad.yaml and junk.yaml", logged)
	}
	events := 0
	for len(r.rec.Events) > 0 {
		if ev := <-r.rec.Events; strings.Contains(ev, "InvalidManifest") {
			events++
		}
	}
	if events != 2 {
		t.Errorf("%d InvalidManifest events, want 2", events)
	}

	// Fixing the bad file brings its pod; the good one stays.
	writeFile(t, filepath.Join(dir, "bad.yaml"), podYAML("bad", "busybox"))
	waitFor(t, r.ch, "bad-n1,good-n1")
}

// TestFileSourceMissingDir: a missing path is an empty snapshot (the source
// counts as seen), and the directory is picked up once it appears.
func TestFileSourceMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	r := startFileSource(t, dir, 50*time.Millisecond)
	waitFor(t, r.ch, "")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "a.yaml"), podYAML("a", "nginx:1.27"))
	waitFor(t, r.ch, "a-n1")
}

// TestFileSourceSingleFile: the path may name one manifest.
func TestFileSourceSingleFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pod.yaml")
	writeFile(t, path, podYAML("solo", "nginx:1.27"))
	writeFile(t, filepath.Join(dir, "other.yaml"), podYAML("other", "nginx:1.27"))
	r := startFileSource(t, path, time.Hour)
	waitFor(t, r.ch, "solo-n1")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.ch, "")
}

// TestFileSourceSingleBadFile: a single manifest that is bad from the start
// still makes the source seen (an empty snapshot).
func TestFileSourceSingleBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pod.yaml")
	writeFile(t, path, "kind: Nonsense")
	r := startFileSource(t, path, time.Hour)
	waitFor(t, r.ch, "")
}

// TestFileSourceDuplicateNames: of two files defining one pod, the first (in
// name order) keeps it; the second is reported naming both, once.
func TestFileSourceDuplicateNames(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), podYAML("same", "nginx:1.27"))
	writeFile(t, filepath.Join(dir, "b.yaml"), podYAML("same", "nginx:1.28"))
	r := startFileSource(t, dir, 50*time.Millisecond)
	pods := waitFor(t, r.ch, "same-n1")
	if image(pods, "same-n1") != "nginx:1.27" {
		t.Errorf("the second file won: image %s", image(pods, "same-n1"))
	}
	waitFor(t, r.ch, "same-n1") // a later period: nothing new to report
	var events []string
	for len(r.rec.Events) > 0 {
		events = append(events, <-r.rec.Events)
	}
	want := "Warning InvalidManifest Static pod manifest " + filepath.Join(dir, "b.yaml") +
		` ignored: pod "same" in namespace "default" is already defined by ` + filepath.Join(dir, "a.yaml")
	if len(events) != 1 || events[0] != want {
		t.Errorf("events %q\nwant [%q]", events, want)
	}
	// Once the first goes, the second is no duplicate any more.
	if err := os.Remove(filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, r.ch, "b's pod", func(pods []*v1.Pod) bool { return image(pods, "same-n1") == "nginx:1.28" })
}

// TestFileSourceTooLarge: a manifest over the kubelet's 10 MiB cap is
// refused with words saying so.
func TestFileSourceTooLarge(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "good.yaml"), podYAML("good", "nginx:1.27"))
	writeFile(t, filepath.Join(dir, "huge.yaml"), podYAML("huge", "nginx:1.27")+"# "+strings.Repeat("x", maxConfigLength)+"\n")
	r := startFileSource(t, dir, time.Hour)
	waitFor(t, r.ch, "good-n1")
	if ev := <-r.rec.Events; !strings.Contains(ev, "huge.yaml ignored: larger than the 10485760-byte limit of a manifest") {
		t.Errorf("event %q", ev)
	}
}
