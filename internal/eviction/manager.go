package eviction

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"
)

// The kubelet's timings (pkg/kubelet/eviction and kubelet.go).
const (
	// MonitoringInterval is how often the signals are read; at most one pod
	// is evicted per round.
	MonitoringInterval = 10 * time.Second
	// DefaultPressureTransitionPeriod is --eviction-pressure-transition-period's default.
	DefaultPressureTransitionPeriod = 5 * time.Minute
	podCleanupTimeout               = 30 * time.Second
	podCleanupPollFreq              = time.Second
	// immediateEvictionGracePeriodSeconds is how long we give pods to shut down when we
	// need them to evict quickly due to resource pressure
	immediateEvictionGracePeriodSeconds = 1
)

// Summaries is where the signals come from (internal/stats).
type Summaries interface {
	// NodeSummary measures the node only (memory, filesystems, processes):
	// it is cheap, and read every round.
	NodeSummary(ctx context.Context) (*statsapi.Summary, error)
	// Summary adds every pod's usage; it is read to rank pods.
	Summary(ctx context.Context) (*statsapi.Summary, error)
}

// KillPodFunc kills a pod, as the kubelet's: its containers are stopped with
// gracePeriodOverride, and fn amends its final status. It blocks until the
// containers are stopped or it gives up.
type KillPodFunc func(pod *v1.Pod, isEvicted bool, gracePeriodOverride *int64, fn func(*v1.PodStatus)) error

// Config wires a Manager.
type Config struct {
	// Thresholds are the parsed --eviction-hard (ParseThresholdConfig).
	Thresholds []Threshold
	// PressureTransitionPeriod is how long a pressure condition stays after
	// its signal cleared.
	PressureTransitionPeriod time.Duration
	// MaxPodGracePeriodSeconds bounds the grace of soft evictions.
	MaxPodGracePeriodSeconds int64
	Stats                    Summaries
	// DedicatedImageFs reports whether the image filesystem is not the
	// node filesystem.
	DedicatedImageFs func() (bool, error)
	// ActivePods lists the pods the node runs and has not finished.
	ActivePods func() []*v1.Pod
	KillPod    KillPodFunc
	// PodCleanedUp reports an evicted pod whose resources are released.
	PodCleanedUp func(*v1.Pod) bool
	Recorder     record.EventRecorder
	NodeRef      *v1.ObjectReference
	Log          logrus.FieldLogger
	Clock        clock.WithTicker
}

// Manager is the kubelet's eviction manager.
type Manager struct {
	cfg       Config
	rankFuncs map[Signal]rankFunc
	// dedicatedImageFs: the image filesystem is not the node filesystem.
	dedicatedImageFs bool

	mu sync.RWMutex
	// nodeConditions are the pressure conditions reported now.
	nodeConditions []v1.NodeConditionType
	// nodeConditionsLastObservedAt is when each condition's signal was last met.
	nodeConditionsLastObservedAt nodeConditionsObservedAt
	// thresholdsFirstObservedAt is when each threshold met was first seen.
	thresholdsFirstObservedAt thresholdsObservedAt
	// thresholdsMet are met (grace period included) and not yet resolved.
	thresholdsMet    []Threshold
	lastObservations signalObservations
}

// NewManager returns a manager; Start runs it.
func NewManager(cfg Config) *Manager {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	kept, dropped := ignoreContainerFs(cfg.Thresholds)
	if len(dropped) > 0 {
		cfg.Log.WithField("signals", dropped).Warn("containerfs thresholds are ignored: the container filesystem is the image filesystem, whose thresholds apply")
	}
	cfg.Thresholds = kept
	return &Manager{cfg: cfg, nodeConditionsLastObservedAt: nodeConditionsObservedAt{}, thresholdsFirstObservedAt: thresholdsObservedAt{}}
}

// Start runs the control loop until ctx ends: one round per monitoring
// interval, or right after the pod evicted in a round is cleaned up.
func (m *Manager) Start(ctx context.Context, monitoringInterval time.Duration) {
	m.cfg.Log.WithField("thresholds", len(m.cfg.Thresholds)).Info("eviction manager: starting control loop")
	go func() {
		for ctx.Err() == nil {
			if evicted := m.synchronize(ctx); len(evicted) > 0 {
				m.cfg.Log.WithField("pods", podNames(evicted)).Info("eviction manager: pods evicted, waiting for pod to be cleaned up")
				m.waitForPodsCleanup(ctx, evicted)
				continue
			}
			select {
			case <-ctx.Done():
			case <-m.cfg.Clock.After(monitoringInterval):
			}
		}
	}()
}

// IsUnderMemoryPressure returns true if the node is under memory pressure.
func (m *Manager) IsUnderMemoryPressure() bool { return m.hasCondition(v1.NodeMemoryPressure) }

// IsUnderDiskPressure returns true if the node is under disk pressure.
func (m *Manager) IsUnderDiskPressure() bool { return m.hasCondition(v1.NodeDiskPressure) }

// IsUnderPIDPressure returns true if the node is under PID pressure.
func (m *Manager) IsUnderPIDPressure() bool { return m.hasCondition(v1.NodePIDPressure) }

// Pressure lists the pressure conditions the node reports now, sorted.
func (m *Manager) Pressure() []v1.NodeConditionType {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := append([]v1.NodeConditionType(nil), m.nodeConditions...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (m *Manager) hasCondition(c v1.NodeConditionType) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return hasNodeCondition(m.nodeConditions, c)
}

func (m *Manager) waitForPodsCleanup(ctx context.Context, pods []*v1.Pod) {
	timeout := m.cfg.Clock.NewTimer(podCleanupTimeout)
	defer timeout.Stop()
	ticker := m.cfg.Clock.NewTicker(podCleanupPollFreq)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timeout.C():
			m.cfg.Log.WithField("pods", podNames(pods)).Info("eviction manager: timed out waiting for pods to be cleaned up")
			return
		case <-ticker.C():
			if !slices.ContainsFunc(pods, func(p *v1.Pod) bool { return !m.cfg.PodCleanedUp(p) }) {
				m.cfg.Log.WithField("pods", podNames(pods)).Info("eviction manager: pods successfully cleaned up")
				return
			}
		}
	}
}
