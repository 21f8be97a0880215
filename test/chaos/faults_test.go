package chaos

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
)

// fault is one way to hurt the node. Only what the harness started is hurt: this node's runlet, its
// podman service, its CNI plugin directory, and the apiserver of the test binary's own control plane.
type fault struct {
	name string
	// kills: the fault ends every process of the node's pods (a reboot), so each container that ran
	// is started again and counts one restart more. No other fault may raise a restart count.
	kills      bool
	podmanOnly bool
	// inject hurts the node and undoes the hurt (starts what it stopped), and says what it did; the
	// churn goes on meanwhile.
	inject func(f *faultRun) string
}

// faultRun is what a fault works with: the fault stream draws its durations and modes.
type faultRun struct {
	t *testing.T
	n *node
	w *workload
	r *rand.Rand
	c *checker
}

var faults = []*fault{
	{name: "runlet-kill", inject: killRunlet},
	{name: "podman-kill", podmanOnly: true, inject: killPodman},
	{name: "apiserver-pause", inject: pauseAPIServer},
	{name: "apiserver-restart", inject: restartAPIServer},
	{name: "reboot", kills: true, inject: reboot},
	{name: "reboot-offline", kills: true, inject: rebootOffline},
	{name: "cni-add-fails", inject: failCNIAdd},
}

func faultNamed(name string) *fault {
	for _, f := range faults {
		if f.name == name {
			return f
		}
	}
	return nil
}

func faultNames() []string {
	var out []string
	for _, f := range faults {
		out = append(out, f.name)
	}
	return out
}

// killRunlet: runlet SIGKILLed, and started again a few seconds later, as a supervisor would.
func killRunlet(f *faultRun) string {
	down := between(f.r, 2*time.Second, 15*time.Second)
	f.n.rl.Kill()
	time.Sleep(down)
	f.n.rl.Start()
	return fmt.Sprintf("runlet SIGKILLed, started again %v later", down)
}

// killPodman: the podman service SIGKILLed (its containers' conmons live on), started again later.
func killPodman(f *faultRun) string {
	down := between(f.r, 2*time.Second, 20*time.Second)
	if err := f.n.pm.Kill(); err != nil {
		f.t.Fatalf("kill the podman service: %v", err)
	}
	time.Sleep(down)
	if err := f.n.pm.Start(); err != nil {
		f.t.Fatalf("start the podman service again: %v", err)
	}
	return fmt.Sprintf("podman service SIGKILLed, started again %v later", down)
}

// pauseAPIServer: the apiserver stopped with SIGSTOP, as a cut link: connections hang.
func pauseAPIServer(f *faultRun) string {
	d := between(f.r, 10*time.Second, 75*time.Second)
	resume := framework.PauseAPIServer(f.t)
	time.Sleep(d)
	resume()
	return fmt.Sprintf("apiserver stopped (SIGSTOP) for %v", d)
}

// restartAPIServer: the apiserver ended (SIGTERM, or SIGKILL as a crash) and started again later:
// connections refused, then every watch lists anew.
func restartAPIServer(f *faultRun) string {
	sig := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}[f.r.IntN(2)]
	d := between(f.r, 5*time.Second, 60*time.Second)
	start := framework.StopAPIServer(f.t, sig)
	time.Sleep(d)
	start()
	return fmt.Sprintf("apiserver ended (%v), started again %v later", sig, d)
}

// reboot: the node rebooted (framework.SimulateReboot) while the apiserver answers; the churn goes
// on against the API while the node is down.
func reboot(f *faultRun) string {
	down := between(f.r, time.Second, 10*time.Second)
	framework.SimulateReboot(f.t, f.n.rl, f.n.pm)
	time.Sleep(down)
	f.n.startPodman()
	f.n.rl.Start()
	return fmt.Sprintf("reboot, node down %v", down)
}

// rebootOffline: the node rebooted, and came up with the apiserver stopped (SIGSTOP) or ended: runlet
// runs the checkpoint's pods. Every pod the checkpoint holds that should run must run again offline;
// then the apiserver comes back.
func rebootOffline(f *faultRun) string {
	down := between(f.r, time.Second, 10*time.Second)
	outage := between(f.r, 5*time.Second, 30*time.Second)
	stopped := f.r.IntN(2) == 0
	framework.SimulateReboot(f.t, f.n.rl, f.n.pm)
	time.Sleep(down) // the churn deletes and creates pods the node will only learn of later
	var resume func()
	how := "ended"
	if stopped {
		resume = framework.StopAPIServer(f.t, syscall.SIGKILL)
	} else {
		how, resume = "stopped (SIGSTOP)", framework.PauseAPIServer(f.t)
	}
	f.n.startPodman()
	t0 := time.Now()
	f.n.rl.StartProcess()
	n := f.c.offline(f.n.rl.RootDir)
	running := time.Since(t0)
	time.Sleep(outage)
	resume()
	f.n.rl.WaitReady(3 * time.Minute)
	return fmt.Sprintf("reboot with the apiserver %s: node down %v, %d checkpointed pods running offline %v after runlet's start, apiserver back %v later",
		how, down, n, running.Round(time.Second), outage)
}

// failCNIAdd: the pod network's ADD fails for a while, at once or after the bridge did its part. A
// few pods are created at its start, so that ADD is tried.
func failCNIAdd(f *faultRun) string {
	mode := []string{"before", "after"}[f.r.IntN(2)]
	d := between(f.r, 15*time.Second, 60*time.Second)
	before := f.n.cni.failures()
	if err := f.n.cni.failAdd(mode); err != nil {
		f.t.Fatal(err)
	}
	f.w.createPods(2)
	time.Sleep(d)
	if err := f.n.cni.failAdd(""); err != nil {
		f.t.Fatal(err)
	}
	failed := f.n.cni.failures() - before
	return fmt.Sprintf("CNI ADD failing (%s the bridge's work) for %v: %d ADDs failed", strings.TrimSpace(mode), d, failed)
}
