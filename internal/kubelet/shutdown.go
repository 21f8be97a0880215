package kubelet

import (
	"context"
	"net"
	"path/filepath"

	nodeinfo "github.com/runlet/runlet/internal/node"
	"github.com/runlet/runlet/internal/nodeshutdown"
	"github.com/runlet/runlet/internal/nodeshutdown/logind"
	"github.com/runlet/runlet/internal/syncloop"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// newShutdownManager builds the node shutdown manager: it stops the pods
// the loop runs through the loop's KillPod, as eviction does, so that
// their final status goes through the status manager like any other.
func newShutdownManager(cfg Config, k *Kubelet, loop *loopRef, rec record.EventRecorder, log *logrus.Entry) *nodeshutdown.Manager {
	return nodeshutdown.New(nodeshutdown.Config{
		Periods:    cfg.ShutdownGracePeriods,
		Ready:      func() bool { return loop.SourcesHandled(k.config.Sources()) },
		ActivePods: loop.ActivePods,
		KillPod: func(ctx context.Context, pod *v1.Pod, grace int64, fn func(*v1.PodStatus)) error {
			return loop.KillPod(ctx, pod, syncloop.KillPodOptions{GracePeriodOverride: &grace, StatusFunc: fn})
		},
		PodCleanedUp: func(pod *v1.Pod) bool { return loop.PodCleanedUp(pod.UID) },
		Recorder:     rec,
		NodeRef:      nodeRef(cfg.NodeName),
		Log:          log.WithField("component", "nodeshutdown"),
	})
}

// listenShutdown opens `runlet shutdown`'s socket under the root dir. A
// node with a grace period fails to start without it; one without only
// warns, as its socket would answer that the shutdown is off.
func listenShutdown(rootDir string, m *nodeshutdown.Manager, log *logrus.Entry) (net.Listener, error) {
	l, err := nodeshutdown.Listen(filepath.Join(rootDir, nodeshutdown.SocketName))
	if err != nil && !m.Enabled() {
		log.WithError(err).Warn("runlet shutdown will not reach this runlet")
		return nil, nil
	}
	return l, err
}

// connectLogind is logind on the system bus.
func connectLogind() (nodeshutdown.Inhibitor, error) { return logind.Connect() }

// runShutdown serves the node shutdown's triggers until ctx ends, and
// makes the node's Ready condition follow the shutdown at once.
func runShutdown(ctx context.Context, m *nodeshutdown.Manager, sock net.Listener, status *nodeinfo.Provider, log *logrus.Entry) {
	log = log.WithField("component", "nodeshutdown")
	if sock != nil {
		go nodeshutdown.Serve(ctx, sock, m, log)
	}
	go nodeshutdown.WatchLogind(ctx, m, connectLogind, log)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-m.Changed():
				status.Refresh()
			}
		}
	}()
}
