package bench

import (
	"testing"
	"time"
)

// idle is what runlet and the podman service cost while nothing happens.
type idle struct {
	cpu, svcCPU float64 // % of one core
	mem, svcMem mem
}

// atRest lets the node settle, reads both processes' memory, then their CPU
// over the window.
func atRest(t *testing.T, cfg config, pid, svcPID int, metricsURL string) idle {
	time.Sleep(cfg.settle)
	r := idle{mem: readMem(t, pid, metricsURL), svcMem: readMem(t, svcPID, "")}
	rl, svc := make(chan cpuWindow, 1), make(chan cpuWindow, 1)
	go func() { rl <- measureCPU([]int{pid}, cfg.cpuWindow) }()
	go func() { svc <- measureCPU([]int{svcPID}, cfg.cpuWindow) }()
	r.cpu, r.svcCPU = (<-rl).procs, (<-svc).procs
	return r
}
