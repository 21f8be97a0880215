package kubelet

import (
	"context"

	"github.com/runlet/runlet/internal/eviction"
	"github.com/runlet/runlet/internal/syncloop"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// newEvictionManager builds the node's eviction manager: its signals come
// from the summary collector, its pods from the sync loop, which kills them.
func newEvictionManager(ctx context.Context, cfg Config, k *Kubelet, loop *loopRef, rec record.EventRecorder, log *logrus.Entry) *eviction.Manager {
	return eviction.NewManager(eviction.Config{
		Thresholds:               cfg.EvictionThresholds,
		PressureTransitionPeriod: cfg.EvictionPressureTransitionPeriod,
		Stats:                    k.stats,
		DedicatedImageFs:         func() (bool, error) { return differentDevices(k.nodeFs, k.imageFs) },
		ActivePods:               loop.ActivePods,
		KillPod: func(pod *v1.Pod, _ bool, grace *int64, fn func(*v1.PodStatus)) error {
			return loop.KillPod(ctx, pod, syncloop.KillPodOptions{GracePeriodOverride: grace, StatusFunc: fn})
		},
		PodCleanedUp: func(pod *v1.Pod) bool { return loop.PodCleanedUp(pod.UID) },
		Recorder:     rec,
		NodeRef:      nodeRef(cfg.NodeName),
		Log:          log.WithField("component", "eviction"),
	})
}

// nodeRef is the Node as its events name it.
func nodeRef(name string) *v1.ObjectReference {
	return &v1.ObjectReference{Kind: "Node", Name: name, UID: types.UID(name)}
}

// differentDevices reports whether two paths are on different filesystems
// (the kubelet's HasDedicatedImageFs).
func differentDevices(a, b string) (bool, error) {
	var sa, sb unix.Stat_t
	if err := unix.Stat(a, &sa); err != nil {
		return false, err
	}
	if err := unix.Stat(b, &sb); err != nil {
		return false, err
	}
	return sa.Dev != sb.Dev, nil
}
