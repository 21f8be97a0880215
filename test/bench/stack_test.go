package bench

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
)

// stackResults are one node's figures, each taken the same way on every node.
type stackResults struct {
	start, del, graceDel  []time.Duration // create → Running; delete grace 0 → sandbox gone; default grace → object gone
	burst                 float64         // pods/s of the first burst size
	mem0, memN            stackMem        // at 0 pods; with the first burst's pods at rest
	rest, probeHTTP, exec stackCPU        // with the first burst's number of pods: at rest; probed every second
}

func newStackResults() *stackResults {
	nan := nan()
	none := stackCPU{agent: nan, stack: nan, host: nan}
	return &stackResults{burst: nan, mem0: noStackMem(), memN: noStackMem(), rest: none, probeHTTP: none, exec: none}
}

// stackMem is the memory of a node's agent and of its whole stack: the agent, its runtime's service
// (the podman service, containerd) and the processes each pod adds to it (conmons, containerd's shims,
// the infra or pause processes), but not the pods' own.
type stackMem struct {
	agent, stack procMem
	procs        int // processes of the stack
	pods         int
}

func noStackMem() stackMem { n := nan(); return stackMem{agent: procMem{n, n}, stack: procMem{n, n}} }

func (m stackMem) String() string {
	return fmt.Sprintf("%d processes, RSS %.1f MiB, PSS %.1f MiB", m.procs, m.stack.rss, m.stack.pss)
}

// perPod is what the stack's memory grew by for each pod, from 0 pods to m's.
func (m stackMem) perPod(zero stackMem) procMem {
	n := float64(m.pods)
	return procMem{rss: (m.stack.rss - zero.stack.rss) / n, pss: (m.stack.pss - zero.stack.pss) / n}
}

// stackCPU is the CPU over a window, in % of one core: the agent's own, its whole stack's (the
// processes alive at both ends, with the children they waited for), and the host's, which also holds
// what a stack's short-lived processes used (an exec probe's conmon or runc) and what the control
// plane did for it.
type stackCPU struct{ agent, stack, host float64 }

// stackProcs are a node's processes at one moment.
type stackProcs struct {
	agent  int
	others []int // its runtime's service, conmons or shims, infra or pause processes
}

func (s stackProcs) all() []int { return append([]int{s.agent}, s.others...) }

// processes finds the node's stack in the host's process table.
func (n *node) processes() stackProcs {
	pt := readProcs()
	switch n.kind {
	case kindPodman:
		return n.podmanProcesses(pt)
	case kindRunc:
		// conmon's exit dir is in runlet's root dir; the pause processes are runlet's children
		exits := "--exit-dir " + filepath.Join(n.rl.RootDir, "runc", "exits") + " "
		conmons := pt.matching(func(p proc) bool { return strings.Contains(p.cmdline+" ", exits) })
		pauses := pt.children([]int{n.rl.PID()}, func(p proc) bool { return p.cmdline == "runlet-pause" })
		return stackProcs{agent: n.rl.PID(), others: append(conmons, pauses...)}
	}
	shims := pt.matching(func(p proc) bool { return strings.Contains(p.cmdline+" ", " -address "+n.kl.sock+" ") })
	pauses := pt.children(shims, func(p proc) bool { return p.cmdline == "/pause" })
	return stackProcs{agent: n.kl.pid("kubelet"), others: append(append([]int{n.kl.pid("containerd")}, shims...), pauses...)}
}

// podmanProcesses: runlet, the podman service, the conmons of the node's containers (their -c is the
// container's ID) and the infra processes, which the infra containers' conmons started.
func (n *node) podmanProcesses(pt procTable) stackProcs {
	ps, err := n.c.ListPods(n.ctx, framework.LabelOwner+"="+n.name)
	if err != nil {
		n.t.Fatal(err)
	}
	ids, infra := map[string]bool{}, map[string]bool{}
	for _, p := range ps {
		infra[p.InfraID] = true
		for _, c := range p.Containers {
			ids[c.ID] = true
		}
	}
	conmonOf := func(p proc, want map[string]bool) bool {
		f := strings.Fields(p.cmdline)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "-c" {
				return strings.HasSuffix(f[0], "conmon") && want[f[i+1]]
			}
		}
		return false
	}
	conmons := pt.matching(func(p proc) bool { return conmonOf(p, ids) })
	infraConmons := pt.matching(func(p proc) bool { return conmonOf(p, infra) })
	infras := pt.children(infraConmons, func(proc) bool { return true })
	return stackProcs{agent: n.rl.PID(), others: append(append([]int{n.be.ServicePID()}, conmons...), infras...)}
}

// readStack reads the memory of the node's stack with pods pods on it.
func (n *node) readStack(pods int) stackMem {
	s := n.processes()
	m := stackMem{agent: readProcMem(s.agent), procs: len(s.all()), pods: pods}
	for _, p := range s.all() {
		pm := readProcMem(p)
		m.stack.rss += pm.rss
		m.stack.pss += pm.pss
	}
	return m
}

// measureStackCPU reads the CPU of the node's agent, its stack and the host over cfg.cpuWindow.
func (n *node) measureStackCPU() stackCPU {
	s := n.processes()
	agent := make(chan cpuWindow, 1)
	go func() { agent <- measureCPU([]int{s.agent}, n.cfg.cpuWindow) }()
	all := measureCPU(s.all(), n.cfg.cpuWindow)
	return stackCPU{agent: (<-agent).procs, stack: all.procs, host: all.host}
}
