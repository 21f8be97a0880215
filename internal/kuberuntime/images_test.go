package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/images"
	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/polltest"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// registry is a fake backend whose images under "reg.example/" are absent until
// pulled, and whose pulls wait until released (or cancelled).
type registry struct {
	*runtimefake.Fake
	release chan struct{}
	fail    error

	mu     sync.Mutex
	pulled map[string]bool
	pulls  int
	creds  []runtime.Credential
}

// testParallelStarts bounds the registry's starts, as a backend's
// capabilities do.
const testParallelStarts = 4

// Capabilities bounds the parallel starts and tells image sizes.
func (r *registry) Capabilities() runtime.Capabilities {
	c := r.Fake.Capabilities()
	c.ParallelStarts, c.ImageSize = testParallelStarts, true
	return c
}

func newRegistry() *registry {
	return &registry{Fake: runtimefake.New(), release: make(chan struct{}), pulled: map[string]bool{}}
}

func (r *registry) EnsureImage(ctx context.Context, image string, policy runtime.PullPolicy, creds []runtime.Credential) (string, error) {
	if !strings.HasPrefix(image, "reg.example/") {
		return r.Fake.EnsureImage(ctx, image, policy, creds)
	}
	r.mu.Lock()
	present := r.pulled[image]
	if policy != runtime.PullAlways {
		r.mu.Unlock()
		if present {
			return "sha256:" + image, nil
		}
		return "", fmt.Errorf("%s: %w", image, runtime.ErrImageNotFound)
	}
	r.pulls++
	r.creds = creds
	r.mu.Unlock()
	select {
	case <-r.release:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if r.fail != nil {
		return "", r.fail
	}
	r.mu.Lock()
	r.pulled[image] = true
	r.mu.Unlock()
	return "sha256:" + image, nil
}

func (r *registry) ImageSize(context.Context, string) (uint64, error) { return 4096, nil }

func (r *registry) pullCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pulls
}

func newImageManager(t *testing.T, r *registry, secrets ...images.SecretGetter) (*Manager, *record.FakeRecorder) {
	log := logtest.Discard()
	rec := record.NewFakeRecorder(1000)
	cfg := Config{Runtime: r, Recorder: rec, RuntimeName: "podman", Owner: "node-1", Log: log, Dirs: poddir.New(t.TempDir())}
	if len(secrets) > 0 {
		cfg.PullSecrets = secrets[0]
	}
	return NewManager(cfg), rec
}

// imageEvents drains the recorder, leaving out MissingClusterDNS (the test
// manager has no --cluster-dns, and the test pods ClusterFirst).
func imageEvents(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			if !strings.Contains(e, "MissingClusterDNS") {
				out = append(out, e)
			}
		default:
			return out
		}
	}
}

func podWithImage(uid, image string) *v1.Pod {
	pod := newPod(v1.RestartPolicyAlways, "c")
	pod.UID, pod.Name = types.UID(uid), uid
	pod.Spec.Containers[0].Image = image
	return pod
}

// Pods waiting for a slow pull hold no start turn: a pod whose image is
// present starts meanwhile, though more pods pull than there are turns.
// The pulling pods share one pull, and each gets the kubelet's events.
func TestSlowPullHoldsNoStartTurn(t *testing.T) {
	r := newRegistry()
	m, rec := newImageManager(t, r)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, testParallelStarts+1)
	for i := range testParallelStarts + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pod := podWithImage(fmt.Sprintf("slow-%d", i), "reg.example/app:1")
			_, err := m.SyncPod(ctx, pod, &runtime.PodStatus{UID: string(pod.UID)})
			errs <- err
		}()
	}
	// Every slow pod is waiting for the pull: more than there are turns.
	var seen []string
	polltest.Eventually(t, 10*time.Second, "every pod to pull", func() bool {
		seen = append(seen, imageEvents(rec)...)
		return strings.Count(strings.Join(seen, "\n"), "Normal Pulling") == testParallelStarts+1
	})
	fast := podWithImage("fast", "img:1")
	done := make(chan error, 1)
	go func() {
		_, err := m.SyncPod(ctx, fast, &runtime.PodStatus{UID: "fast"})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a pod with its image present waited for other pods' pull")
	}
	close(r.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := r.pullCount(); n != 1 {
		t.Errorf("%d pulls for one image; want 1, shared", n)
	}
	pulled := regexp.MustCompile(`^Normal Pulled Successfully pulled image "reg.example/app:1" in \d+(\.\d+)?(ms|s|µs) \(\d+(\.\d+)?(ms|s|µs) including waiting\)\. Image size: 4096 bytes\.$`)
	var pulling, success int
	for _, e := range append(seen, imageEvents(rec)...) {
		switch {
		case e == `Normal Pulling Pulling image "reg.example/app:1"`:
			pulling++
		case pulled.MatchString(e):
			success++
		case strings.Contains(e, "Successfully pulled"):
			t.Errorf("Pulled event in another form: %q", e)
		}
	}
	if pulling != testParallelStarts+1 || success != testParallelStarts+1 {
		t.Errorf("%d Pulling and %d Pulled events; want %d of each", pulling, success, testParallelStarts+1)
	}
}

// A failed pull is ErrImagePull with the kubelet's events; the next sync in
// the back-off is ImagePullBackOff, with the failure in its message.
func TestPullFailureEvents(t *testing.T) {
	r := newRegistry()
	r.fail = errors.New("unauthorized: authentication required")
	close(r.release)
	m, rec := newImageManager(t, r)
	pod := podWithImage("p1", "reg.example/private:1")
	if _, err := m.SyncPod(context.Background(), pod, &runtime.PodStatus{UID: "p1"}); err == nil {
		t.Fatal("no error")
	}
	if w := m.Waiting("p1")["c"]; w.Reason != "ErrImagePull" || w.Message != "unauthorized: authentication required" {
		t.Errorf("waiting = %+v", w)
	}
	want := []string{
		`Normal Pulling Pulling image "reg.example/private:1"`,
		`Warning Failed Failed to pull image "reg.example/private:1": unauthorized: authentication required`,
		`Warning Failed Error: ErrImagePull`,
	}
	if got := imageEvents(rec); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events\n%q\nwant\n%q", got, want)
	}
	sb := m.rt.(*registry).Sandboxes()
	ps := &runtime.PodStatus{UID: "p1", Sandboxes: sb}
	if _, err := m.SyncPod(context.Background(), pod, ps); !errors.Is(err, ErrBackOff) {
		t.Fatalf("second sync: %v; want the back-off", err)
	}
	if w := m.Waiting("p1")["c"]; w.Reason != "ImagePullBackOff" ||
		w.Message != `Back-off pulling image "reg.example/private:1": ErrImagePull: unauthorized: authentication required` {
		t.Errorf("waiting = %+v", w)
	}
	want = []string{`Normal BackOff Back-off pulling image "reg.example/private:1"`, `Warning Failed Error: ImagePullBackOff`}
	if got := imageEvents(rec); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events\n%q\nwant\n%q", got, want)
	}
}

type pullSecretMap map[string]*v1.Secret

func (s pullSecretMap) Secret(ns, name string) (*v1.Secret, error) {
	if sec, ok := s[ns+"/"+name]; ok {
		return sec, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("secret"), name)
}

// The pod's pull secrets reach the backend as the credentials for the
// image's registry.
func TestPullUsesPodSecrets(t *testing.T) {
	r := newRegistry()
	close(r.release)
	m, _ := newImageManager(t, r, pullSecretMap{"ns/creds": {Type: v1.SecretTypeDockerConfigJson, Data: map[string][]byte{
		v1.DockerConfigJsonKey: []byte(`{"auths":{"reg.example":{"username":"alice","password":"s3cret"}}}`)}}})
	pod := podWithImage("p1", "reg.example/private:1")
	pod.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "missing"}, {Name: "creds"}}
	if _, err := m.SyncPod(context.Background(), pod, &runtime.PodStatus{UID: "p1"}); err != nil {
		t.Fatal(err)
	}
	if want := []runtime.Credential{{Server: "reg.example", Username: "alice", Password: "s3cret"}}; fmt.Sprint(r.creds) != fmt.Sprint(want) {
		t.Errorf("credentials %+v; want %+v", r.creds, want)
	}
}

// A failed pull with a pull secret missing says so, as the kubelet does; a
// pull that works needs no such word.
func TestPullFailureNamesMissingSecrets(t *testing.T) {
	r := newRegistry()
	r.fail = errors.New("unauthorized: authentication required")
	close(r.release)
	m, rec := newImageManager(t, r, pullSecretMap{})
	pod := podWithImage("p1", "reg.example/private:1")
	pod.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "gone"}, {Name: "also-gone"}}
	if _, err := m.SyncPod(context.Background(), pod, &runtime.PodStatus{UID: "p1"}); err == nil {
		t.Fatal("no error")
	}
	want := `Warning FailedToRetrieveImagePullSecret Unable to retrieve some image pull secrets (gone, also-gone); attempting to pull the image may not succeed.`
	found := false
	for _, e := range imageEvents(rec) {
		found = found || e == want
	}
	if !found {
		t.Errorf("no event %q", want)
	}
}

// A pod forgotten while its pull backs off leaves no pull error behind.
func TestForgetDropsPullErrors(t *testing.T) {
	r := newRegistry()
	r.fail = errors.New("manifest unknown")
	close(r.release)
	m, _ := newImageManager(t, r)
	for _, uid := range []string{"p1", "p2"} {
		if _, err := m.SyncPod(context.Background(), podWithImage(uid, "reg.example/gone:1"), &runtime.PodStatus{UID: uid}); err == nil {
			t.Fatal("no error")
		}
	}
	m.Forget("p1")
	var left []string
	m.pullErrors.Range(func(k, _ any) bool { left = append(left, k.(string)); return true })
	if fmt.Sprint(left) != "[p2_reg.example/gone:1]" {
		t.Errorf("pull errors kept: %v; want only p2's", left)
	}
}

// A pull whose pod is deleted stops at once, without a failure to report.
func TestPullCancelledWithItsPod(t *testing.T) {
	r := newRegistry()
	m, rec := newImageManager(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	pod := podWithImage("p1", "reg.example/app:1")
	go func() {
		_, err := m.SyncPod(ctx, pod, &runtime.PodStatus{UID: "p1"})
		done <- err
	}()
	polltest.Eventually(t, 10*time.Second, "the pull to start", func() bool { return r.pullCount() == 1 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("SyncPod = %v; want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sync did not end with its context")
	}
	for _, e := range imageEvents(rec) {
		if strings.HasPrefix(e, "Warning") {
			t.Errorf("event %q for a pull cancelled with its pod", e)
		}
	}
	if w, ok := m.Waiting("p1")["c"]; ok {
		t.Errorf("waiting %+v after a cancelled pull", w)
	}
}

// Never and an invalid name get the kubelet's reasons and words.
func TestImageNeverAndInvalid(t *testing.T) {
	r := newRegistry()
	m, rec := newImageManager(t, r)
	pod := podWithImage("p1", "reg.example/absent:1")
	pod.Spec.Containers[0].ImagePullPolicy = v1.PullNever
	_, _ = m.SyncPod(context.Background(), pod, &runtime.PodStatus{UID: "p1"})
	if w := m.Waiting("p1")["c"]; w.Reason != "ErrImageNeverPull" || w.Message != `Container image "reg.example/absent:1" is not present with pull policy of Never` {
		t.Errorf("waiting = %+v", w)
	}
	if got := imageEvents(rec); len(got) != 2 || got[0] != `Warning ErrImageNeverPull Container image "reg.example/absent:1" is not present with pull policy of Never` {
		t.Errorf("events %q", got)
	}
	pod = podWithImage("p2", "Bad:Name")
	_, _ = m.SyncPod(context.Background(), pod, &runtime.PodStatus{UID: "p2"})
	if w := m.Waiting("p2")["c"]; w.Reason != "InvalidImageName" || !strings.HasPrefix(w.Message, `Failed to apply default image tag "Bad:Name"`) {
		t.Errorf("waiting = %+v", w)
	}
	if r.pullCount() != 0 {
		t.Error("pulled anyway")
	}
}

func TestPullPolicy(t *testing.T) {
	for _, tc := range []struct {
		image  string
		policy v1.PullPolicy
		want   runtime.PullPolicy
	}{
		{"busybox", "", runtime.PullAlways},
		{"busybox:latest", "", runtime.PullAlways},
		{"busybox:1.37", "", runtime.PullIfNotPresent},
		{"reg.example:5000/app", "", runtime.PullAlways},
		{"reg.example:5000/app:2", "", runtime.PullIfNotPresent},
		{"busybox:1.37", v1.PullAlways, runtime.PullAlways},
		{"busybox", v1.PullNever, runtime.PullNever},
		// this machine's own images have nowhere to be pulled from
		{"localhost/runlet/busybox:latest", "", runtime.PullIfNotPresent},
		{"localhost/runlet/busybox:latest", v1.PullAlways, runtime.PullIfNotPresent},
		{"localhost/runlet/busybox:latest", v1.PullNever, runtime.PullNever},
		{"localhost:5000/pause:testing", v1.PullAlways, runtime.PullAlways},
	} {
		if got := pullPolicy(&v1.Container{Image: tc.image, ImagePullPolicy: tc.policy}); got != tc.want {
			t.Errorf("%s %q: %s; want %s", tc.image, tc.policy, got, tc.want)
		}
	}
}
