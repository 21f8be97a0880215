package stats

import (
	"context"
	"sort"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// podStats covers pods whose newest sandbox is ready, with their running
// containers, as the kubelet's CRI stats provider does.
func (c *Collector) podStats(ctx context.Context, memTotal uint64) ([]statsv1alpha1.PodStats, error) {
	var pods []*runtime.PodStatus
	var ids []string
	for _, ps := range c.cfg.Pods() {
		if sb := ps.Sandbox(); sb == nil || sb.State != runtime.SandboxReady {
			continue
		}
		pods = append(pods, ps)
		for _, ctr := range runningContainers(ps) {
			ids = append(ids, ctr.ID)
		}
	}
	byID := map[string]runtime.ContainerStats{}
	if len(ids) > 0 {
		st, err := c.cfg.Backend.Stats(ctx, ids)
		if err != nil {
			return nil, err
		}
		for _, s := range st {
			byID[s.ID] = s
		}
	}
	out := make([]statsv1alpha1.PodStats, 0, len(pods))
	now := time.Now()
	for _, ps := range pods {
		out = append(out, c.onePod(ctx, ps, byID, memTotal, now))
	}
	running := make(map[string]bool, len(ids))
	for _, id := range ids {
		running[id] = true
	}
	c.files.keep(running)
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].PodRef, out[j].PodRef
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	return out, nil
}

// runningContainers returns the newest container of each name if it runs.
func runningContainers(ps *runtime.PodStatus) []*runtime.Container {
	seen := map[string]bool{}
	var out []*runtime.Container
	for i := range ps.Containers {
		ctr := &ps.Containers[i]
		if seen[ctr.Name] {
			continue
		}
		seen[ctr.Name] = true
		if ctr.State == runtime.ContainerRunning {
			out = append(out, ctr)
		}
	}
	return out
}

func (c *Collector) onePod(ctx context.Context, ps *runtime.PodStatus, byID map[string]runtime.ContainerStats, memTotal uint64, now time.Time) statsv1alpha1.PodStats {
	sb := ps.Sandbox()
	pod := statsv1alpha1.PodStats{
		PodRef:    statsv1alpha1.PodReference{Name: sb.Name, Namespace: sb.Namespace, UID: sb.PodUID},
		StartTime: metav1.NewTime(sb.CreatedAt),
	}
	var sum runtime.ContainerStats
	var rate uint64
	var net *runtime.ContainerStats
	for _, ctr := range runningContainers(ps) {
		s, ok := byID[ctr.ID]
		cs := statsv1alpha1.ContainerStats{Name: ctr.Name, StartTime: metav1.NewTime(ctr.StartedAt)}
		c.containerDisk(ctx, &cs, ctr.ID, now)
		if ok {
			cs.CPU = c.cpu("ctr/"+ctr.ID, s.CPUNanos, s.Time, ctr.StartedAt)
			rate += *cs.CPU.UsageNanoCores
			cs.Memory = containerMemory(s, memTotal)
			sum.CPUNanos += s.CPUNanos
			sum.MemoryWorkingSet += s.MemoryWorkingSet
			sum.MemoryUsageBytes += s.MemoryUsageBytes
			sum.ProcessCount += s.ProcessCount
			sum.Time = s.Time
			if net == nil {
				net = &s // the containers share the pod's network namespace
			}
		}
		pod.Containers = append(pod.Containers, cs)
	}
	volumes, onNodeFs := c.podVolumes(sb.PodUID, now)
	pod.VolumeStats = volumes
	c.podEphemeral(&pod, onNodeFs, now)
	if sum.Time.IsZero() {
		return pod
	}
	// The pod's rate is its containers' sum, so a restarted container (its
	// counter starts again) does not distort it.
	pod.CPU = &statsv1alpha1.CPUStats{Time: metav1.NewTime(sum.Time), UsageCoreNanoSeconds: ptr(sum.CPUNanos), UsageNanoCores: ptr(rate)}
	pod.Memory = &statsv1alpha1.MemoryStats{Time: metav1.NewTime(sum.Time), WorkingSetBytes: ptr(sum.MemoryWorkingSet), UsageBytes: ptr(sum.MemoryUsageBytes)}
	pod.ProcessStats = &statsv1alpha1.ProcessStats{ProcessCount: ptr(sum.ProcessCount)}
	pod.Network = podNetwork(net)
	return pod
}

func (c *Collector) cpu(key string, nanos uint64, at, since time.Time) *statsv1alpha1.CPUStats {
	return &statsv1alpha1.CPUStats{
		Time:                 metav1.NewTime(at),
		UsageCoreNanoSeconds: ptr(nanos),
		UsageNanoCores:       ptr(c.rates.nanoCores(key, nanos, at, since)),
	}
}

// containerMemory reports available bytes only under a real limit: podman
// gives the host's memory as the limit of an unlimited container.
func containerMemory(s runtime.ContainerStats, memTotal uint64) *statsv1alpha1.MemoryStats {
	ms := &statsv1alpha1.MemoryStats{Time: metav1.NewTime(s.Time), WorkingSetBytes: ptr(s.MemoryWorkingSet), UsageBytes: ptr(s.MemoryUsageBytes)}
	if lim := s.MemoryLimitBytes; lim > 0 && (memTotal == 0 || lim < memTotal) {
		ms.AvailableBytes = ptr(lim - min(s.MemoryWorkingSet, lim))
	}
	return ms
}

// podNetwork names the pod's interface eth0, as CNI pods have it.
func podNetwork(s *runtime.ContainerStats) *statsv1alpha1.NetworkStats {
	is := statsv1alpha1.InterfaceStats{Name: "eth0", RxBytes: ptr(s.NetRxBytes), TxBytes: ptr(s.NetTxBytes)}
	return &statsv1alpha1.NetworkStats{Time: metav1.NewTime(s.Time), InterfaceStats: is, Interfaces: []statsv1alpha1.InterfaceStats{is}}
}
