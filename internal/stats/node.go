package stats

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// nodeStats reads the host. memTotal is returned for the containers'
// available bytes (podman reports the host's memory as an unset limit).
func (c *Collector) nodeStats(now time.Time) (statsv1alpha1.NodeStats, uint64, error) {
	p := c.proc
	usage, boot, err := p.cpuUsage()
	if err != nil {
		return statsv1alpha1.NodeStats{}, 0, err
	}
	mem, err := p.keyValues("meminfo")
	if err != nil {
		return statsv1alpha1.NodeStats{}, 0, err
	}
	ns := statsv1alpha1.NodeStats{
		NodeName:  c.cfg.NodeName,
		StartTime: metav1.NewTime(boot),
		CPU: &statsv1alpha1.CPUStats{
			Time:                 metav1.NewTime(now),
			UsageCoreNanoSeconds: ptr(usage),
			UsageNanoCores:       ptr(c.rates.nanoCores("node", usage, now, boot)),
		},
		Memory:  nodeMemory(mem, p, now),
		Swap:    nodeSwap(mem, now),
		Network: nodeNetwork(p, now),
		Fs:      fsStats(c.cfg.NodeFsPath, now),
		Rlimit:  nodeRlimit(p, now),
	}
	if imageFs := fsStats(c.cfg.ImageFsPath, now); imageFs != nil {
		ns.Runtime = &statsv1alpha1.RuntimeStats{ImageFs: imageFs, ContainerFs: imageFs}
	}
	return ns, mem["MemTotal"], nil
}

// nodeMemory follows cAdvisor's root cgroup figures: usage is what is not
// free, the working set leaves out inactive page cache (reclaimable), and
// available is what the working set leaves of the total.
func nodeMemory(mem map[string]uint64, p procFS, now time.Time) *statsv1alpha1.MemoryStats {
	total := mem["MemTotal"]
	usage := total - min(mem["MemFree"], total)
	ws := usage - min(mem["Inactive(file)"], usage)
	ms := &statsv1alpha1.MemoryStats{
		Time:            metav1.NewTime(now),
		AvailableBytes:  ptr(total - ws),
		UsageBytes:      ptr(usage),
		WorkingSetBytes: ptr(ws),
		RSSBytes:        ptr(mem["AnonPages"]),
	}
	if vm, err := p.keyValues("vmstat"); err == nil {
		ms.PageFaults, ms.MajorPageFaults = ptr(vm["pgfault"]), ptr(vm["pgmajfault"])
	}
	return ms
}

func nodeSwap(mem map[string]uint64, now time.Time) *statsv1alpha1.SwapStats {
	total, free := mem["SwapTotal"], mem["SwapFree"]
	return &statsv1alpha1.SwapStats{Time: metav1.NewTime(now), SwapAvailableBytes: ptr(free), SwapUsageBytes: ptr(total - min(free, total))}
}

// nodeNetwork lists every interface but loopback; the default route's
// interface is the node's headline figure, as on the kubelet.
func nodeNetwork(p procFS, now time.Time) *statsv1alpha1.NetworkStats {
	devs, err := p.netDevs()
	if err != nil {
		return nil
	}
	def := p.defaultInterface()
	ns := &statsv1alpha1.NetworkStats{Time: metav1.NewTime(now)}
	for _, d := range devs {
		if d.Name == "lo" {
			continue
		}
		is := statsv1alpha1.InterfaceStats{Name: d.Name, RxBytes: ptr(d.RxBytes), RxErrors: ptr(d.RxErrors), TxBytes: ptr(d.TxBytes), TxErrors: ptr(d.TxErrs)}
		ns.Interfaces = append(ns.Interfaces, is)
		if d.Name == def || (def == "" && ns.Name == "") {
			ns.InterfaceStats = is
		}
	}
	return ns
}

func nodeRlimit(p procFS, now time.Time) *statsv1alpha1.RlimitStats {
	rl := &statsv1alpha1.RlimitStats{Time: metav1.NewTime(now)}
	if v, err := p.pidMax(); err == nil {
		rl.MaxPID = ptr(v)
	}
	if v, err := p.threads(); err == nil {
		rl.NumOfRunningProcesses = ptr(v)
	}
	return rl
}
