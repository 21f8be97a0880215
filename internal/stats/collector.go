package stats

import (
	"context"
	"time"

	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/runtime"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Backend is the part of the runtime contract stats need.
type Backend interface {
	Stats(ctx context.Context, ids []string) ([]runtime.ContainerStats, error)
}

// Config wires a Collector.
type Config struct {
	NodeName string
	Backend  Backend
	// Pods returns the backend's view of every pod (the PLEG cache), which
	// covers static pods too.
	Pods func() []*runtime.PodStatus
	// NodeFsPath is on the node's filesystem (runlet's root dir);
	// ImageFsPath on the one holding images and container layers.
	NodeFsPath, ImageFsPath string
	// ProcRoot is where procfs is mounted; "/proc" when empty.
	ProcRoot string
	// Dirs is runlet's pod layout under --root-dir: the pods' volumes are
	// measured there. Without a root, volumes are not measured.
	Dirs poddir.Dirs
	// Files, if set, locates containers' logs and writable layers, which
	// are then measured.
	Files runtime.Files
}

// Collector builds summaries; it keeps the previous CPU samples for rates.
type Collector struct {
	cfg   Config
	proc  procFS
	rates *cpuRates
	files *files
}

// New returns a Collector.
func New(cfg Config) *Collector {
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	return &Collector{cfg: cfg, proc: procFS(cfg.ProcRoot), rates: newCPURates(), files: &files{byID: map[string][2]string{}}}
}

// Summary is the node's /stats/summary.
func (c *Collector) Summary(ctx context.Context) (*statsv1alpha1.Summary, error) {
	now := time.Now()
	node, memTotal, err := c.nodeStats(now)
	if err != nil {
		return nil, err
	}
	pods, err := c.podStats(ctx, memTotal)
	if err != nil {
		return nil, err
	}
	node.SystemContainers = []statsv1alpha1.ContainerStats{podsContainer(pods, node.StartTime, now)}
	c.rates.forget(now.Add(-forgetAfter))
	return &statsv1alpha1.Summary{Node: node, Pods: pods}, nil
}

// NodeSummary is the node's part of the summary alone (memory,
// filesystems, processes): it asks the backend nothing and walks no pod's
// files, so the eviction manager can read it every round.
func (c *Collector) NodeSummary(context.Context) (*statsv1alpha1.Summary, error) {
	node, _, err := c.nodeStats(time.Now())
	if err != nil {
		return nil, err
	}
	return &statsv1alpha1.Summary{Node: node}, nil
}

// podsContainer is the kubelet's "pods" system container: all pods together.
func podsContainer(pods []statsv1alpha1.PodStats, start metav1.Time, now time.Time) statsv1alpha1.ContainerStats {
	var cpu, ws, usage uint64
	var rate uint64
	for _, p := range pods {
		if p.CPU != nil {
			cpu += deref(p.CPU.UsageCoreNanoSeconds)
			rate += deref(p.CPU.UsageNanoCores)
		}
		if p.Memory != nil {
			ws += deref(p.Memory.WorkingSetBytes)
			usage += deref(p.Memory.UsageBytes)
		}
	}
	t := metav1.NewTime(now)
	return statsv1alpha1.ContainerStats{
		Name: statsv1alpha1.SystemContainerPods, StartTime: start,
		CPU:    &statsv1alpha1.CPUStats{Time: t, UsageCoreNanoSeconds: ptr(cpu), UsageNanoCores: ptr(rate)},
		Memory: &statsv1alpha1.MemoryStats{Time: t, WorkingSetBytes: ptr(ws), UsageBytes: ptr(usage)},
	}
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}
