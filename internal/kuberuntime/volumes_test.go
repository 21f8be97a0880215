package kuberuntime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/pleg"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// fakeVolumes is a volume manager whose answers the test sets.
type fakeVolumes struct {
	ready    bool
	errs     []error
	mounts   []runtime.Mount
	mountErr error
	// refused: the first tries fail, as a new pod's token read the Node
	// authorizer refuses until it knows the pod.
	refused, tries int
}

func (f *fakeVolumes) SetUpPod(context.Context, *v1.Pod) (bool, []error) {
	f.tries++
	if f.tries <= f.refused {
		return false, []error{errors.New(`MountVolume.SetUp failed for volume "token" : failed to fetch token: forbidden`)}
	}
	return f.ready, f.errs
}

func (f *fakeVolumes) ContainerMounts(*v1.Pod, *v1.Container, []v1.EnvVar) ([]runtime.Mount, error) {
	return f.mounts, f.mountErr
}

func newVolumesEnv(t *testing.T, vols *fakeVolumes) (*env, *record.FakeRecorder) {
	log := logtest.Discard()
	f := runtimefake.New()
	cache := pleg.NewCache()
	rec := record.NewFakeRecorder(100)
	return &env{t: t, ctx: context.Background(), f: f, cache: cache,
		m: NewManager(Config{Runtime: f, Recorder: rec, RuntimeName: "podman", Owner: "node-1", Log: log,
			Volumes: vols}),
		pleg: pleg.New(f, cache, time.Hour, log)}, rec
}

// TestSyncPodWaitsForVolumes: a volume that cannot be set up keeps the pod
// from getting a sandbox, with a FailedMount event, and holds no pod
// network (set up while the volumes mount); it starts once the volume is
// ready.
func TestSyncPodWaitsForVolumes(t *testing.T) {
	vols := &fakeVolumes{errs: []error{errors.New(`MountVolume.SetUp failed for volume "cfg" : configmap "x" not found`)}}
	e, rec := newVolumesEnv(t, vols)
	e.m.mountRetries = []time.Duration{time.Millisecond, time.Millisecond}
	net := newFakeNetwork()
	e.m.network = net
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); err == nil || !strings.Contains(err.Error(), `configmap "x" not found`) {
		t.Fatalf("SyncPod with a volume not ready: %v", err)
	}
	if n := e.f.Calls("CreateSandbox"); n != 0 {
		t.Fatalf("a sandbox was created before the volumes were ready")
	}
	if n := net.count(); n != 0 {
		t.Fatalf("%d pod networks held by a pod whose volumes failed", n)
	}
	evs := events(rec)
	if strings.Contains(evs, "\n") || !strings.HasPrefix(evs, `Warning FailedMount MountVolume.SetUp failed for volume "cfg"`) {
		t.Fatalf("events %q; want one FailedMount, of the sync's last try", evs)
	}
	if vols.tries != 3 {
		t.Fatalf("volumes tried %d times in a sync; want 3", vols.tries)
	}
	// A retry mounts first: a volume that keeps failing sets up no network.
	setups := len(net.ports)
	if _, err := e.sync(pod); err == nil {
		t.Fatal("SyncPod succeeded with the volume still failing")
	}
	if n := len(net.ports) - setups; n != 0 {
		t.Fatalf("a retry of a pod whose volumes fail set up %d pod networks", n)
	}

	vols.ready, vols.errs = true, nil
	vols.mounts = []runtime.Mount{{HostPath: "/root/pods/uid-1/volumes/kubernetes.io~configmap/cfg", ContainerPath: "/etc/cfg", ReadOnly: true}}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	cfg, ok := e.f.Config(e.latest(pod, "c").ID)
	if !ok || len(cfg.Mounts) != 1 || cfg.Mounts[0] != vols.mounts[0] {
		t.Fatalf("container created with mounts %+v, want %+v", cfg.Mounts, vols.mounts)
	}
	if sb := e.status(pod).Sandbox(); sb == nil || net.count() != 1 || sb.NetNS == "" {
		t.Fatalf("sandbox %+v with %d pod networks; want it in the one network set up", sb, net.count())
	}
}

// TestSyncPodRetriesVolumesRefusedAtFirst: a volume refused on the first
// tries (a new pod the Node authorizer does not know yet) is tried again
// within the sync, and the pod starts in that sync, with no event.
func TestSyncPodRetriesVolumesRefusedAtFirst(t *testing.T) {
	vols := &fakeVolumes{ready: true, refused: 2}
	e, rec := newVolumesEnv(t, vols)
	e.m.mountRetries = []time.Duration{time.Millisecond, time.Millisecond}
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("SyncPod with a volume refused twice: %v", err)
	}
	if e.latest(pod, "c").State != runtime.ContainerRunning {
		t.Fatal("the container did not start in the sync")
	}
	if evs := events(rec); strings.Contains(evs, "FailedMount") {
		t.Errorf("events %q; want no FailedMount for refusals that a retry got past", evs)
	}
}

// TestSyncPodUpdateFailureDoesNotBlock: a volume that was set up once and
// fails to update is reported, but the pod runs on.
func TestSyncPodUpdateFailureDoesNotBlock(t *testing.T) {
	vols := &fakeVolumes{ready: true, errs: []error{errors.New(`MountVolume.SetUp failed for volume "cfg" : configmap "x" not found`)}}
	e, rec := newVolumesEnv(t, vols)
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if e.latest(pod, "c").State != runtime.ContainerRunning {
		t.Fatal("the container did not start")
	}
	if evs := events(rec); !strings.Contains(evs, "FailedMount") {
		t.Errorf("no FailedMount event: %q", evs)
	}
}

// TestContainerMountsError: a mount that cannot be made (a bad subPath)
// leaves the container waiting with CreateContainerConfigError.
func TestContainerMountsError(t *testing.T) {
	vols := &fakeVolumes{ready: true, mountErr: errors.New("unable to provision SubPath `../x`: must not contain '..'")}
	e, rec := newVolumesEnv(t, vols)
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); err == nil {
		t.Fatal("SyncPod succeeded with a bad subPath")
	}
	if n := e.f.Calls("CreateContainer"); n != 0 {
		t.Fatalf("the container was created")
	}
	w := e.m.Waiting("uid-1")["c"]
	if w.Reason != "CreateContainerConfigError" || !strings.Contains(w.Message, "must not contain '..'") {
		t.Fatalf("waiting %+v", w)
	}
	if evs := events(rec); !strings.Contains(evs, "Warning Failed Error: unable to provision SubPath") {
		t.Errorf("events %q", evs)
	}
}
