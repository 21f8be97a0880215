package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/runlet/runlet/test/e2e/framework"
)

// rebootOfflineWait is the runlet's --offline-start-after in the reboot figure: the part of the time to
// Running that is runlet waiting for an apiserver that does not answer.
const rebootOfflineWait = 5 * time.Second

// benchReboot measures a node's return after a reboot with its apiserver down: cfg.reboot pods run on
// runlet over a podman of the bench's own; the reboot is simulated (framework.SimulateReboot), the
// apiserver stopped (SIGSTOP), and runlet started again: the time from its exec to every checkpointed
// pod Running again, as its kubelet port shows them (polled every 100 ms). Then the apiserver
// resumes: the time until the API shows every pod's post-reboot container running, and the containers
// the reconnect restarted (one other than the container runlet ran offline), counted after cfg.settle
// (target 0).
func benchReboot(t *testing.T, ctx context.Context, cfg config, r *results) {
	pm := framework.PrivatePodman(t)
	rl := framework.StartRunlet(t, framework.RunletOptions{PodmanSocket: pm.Socket, LogLevel: "info", MaxPods: cfg.reboot + 10,
		ExtraArgs: []string{"--offline-start-after=" + rebootOfflineWait.String(), "--authorization-mode=AlwaysAllow"}})
	if keep := os.Getenv("RUNLET_BENCH_LOG"); keep != "" { // runlet's log outlives the test's temp dir
		t.Cleanup(func() {
			if err := os.WriteFile(keep+".reboot", []byte(rl.Log()), 0o644); err != nil {
				t.Log(err)
			}
		})
	}
	ns := framework.Namespace(t)
	api := framework.Get(t).Client.CoreV1().Pods(ns)
	uids := map[string]types.UID{}
	for i := range cfg.reboot {
		p := framework.PodFor(rl.NodeName, ns, fmt.Sprintf("boot-%d", i), framework.Sleeper("c"))
		created, err := api.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids[created.Name] = created.UID
	}
	before := map[string]string{} // each pod's container before the reboot
	for name := range uids {
		p := framework.WaitForPod(t, ns, name, 3*time.Minute, func(p *v1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].State.Running != nil && cs[0].ContainerID != ""
		})
		before[name] = p.Status.ContainerStatuses[0].ContainerID
	}
	framework.Eventually(t, time.Minute, "every pod checkpointed Running", func() (bool, error) {
		return checkpointedRunning(rl.RootDir, uids), nil
	})
	progress("reboot: %d pods Running and checkpointed; rebooting node %s with the apiserver stopped", cfg.reboot, rl.NodeName)

	framework.SimulateReboot(t, rl, pm)
	resume := framework.PauseAPIServer(t)
	if err := pm.Start(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	rl.StartProcess()
	offline := waitKubeletRunning(t, rl, uids, before, 5*time.Minute)
	r.rebootRunning = time.Since(t0)
	progress("reboot: %d pods Running %v after runlet's start (offline wait %v)", len(offline), r.rebootRunning.Round(time.Millisecond), rebootOfflineWait)

	resume()
	t1 := time.Now()
	framework.Eventually(t, 2*time.Minute, "every pod's post-reboot container in the API", func() (bool, error) {
		list, err := api.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		n := 0
		for _, p := range list.Items {
			if cs := p.Status.ContainerStatuses; len(cs) == 1 && cs[0].State.Running != nil && cs[0].ContainerID != before[p.Name] {
				n++
			}
		}
		return n == len(uids), nil
	})
	r.reconnectStatus = time.Since(t1)
	time.Sleep(cfg.settle)
	list, err := api.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	restarts := 0
	for _, p := range list.Items {
		if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].ContainerID != offline[p.Name] || cs[0].State.Running == nil {
			restarts++
		}
	}
	r.reconnectRestarts = float64(restarts)
	progress("reboot: statuses in the API %v after the apiserver resumed; %d containers restarted by the reconnect",
		r.reconnectStatus.Round(time.Millisecond), restarts)
}

// checkpointedRunning reports every pod of uids Running in the checkpoint under rootDir.
func checkpointedRunning(rootDir string, uids map[string]types.UID) bool {
	for _, uid := range uids {
		if p, ok := framework.CheckpointedPod(rootDir, uid); !ok || p.Status.Phase != v1.PodRunning {
			return false
		}
	}
	return true
}

// waitKubeletRunning polls runlet's /runningpods/ until every pod of uids has a container running
// other than its container before the reboot (the checkpoint's status names that one until runlet
// reports anew), and returns each one's container ID by pod name.
func waitKubeletRunning(t *testing.T, rl *framework.Runlet, uids map[string]types.UID, before map[string]string, timeout time.Duration) map[string]string {
	pem, err := os.ReadFile(framework.Get(t).CACert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cl := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer cl.CloseIdleConnections()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ids := runningContainers(cl, rl.KubeletURL()+"/runningpods/", uids, before); len(ids) == len(uids) {
			return ids
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the checkpointed pods not all Running within %v of runlet's start\n%s", timeout, rl.LogTail(40))
	return nil
}

// runningContainers reads url (a PodList) for the running container of each pod of uids that is not
// its container before.
func runningContainers(cl *http.Client, url string, uids map[string]types.UID, before map[string]string) map[string]string {
	resp, err := cl.Get(url)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var list v1.PodList
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&list) != nil {
		return nil
	}
	ids := map[string]string{}
	for _, p := range list.Items {
		if cs := p.Status.ContainerStatuses; uids[p.Name] == p.UID && len(cs) == 1 && cs[0].State.Running != nil && cs[0].ContainerID != before[p.Name] {
			ids[p.Name] = cs[0].ContainerID
		}
	}
	return ids
}
