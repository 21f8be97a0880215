package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/runlet/runlet/internal/runtime/podman"
	"github.com/runlet/runlet/test/e2e/framework"
)

func TestProbeDelete(t *testing.T) {
	ctx := context.Background()
	framework.EnsureImages(t)
	be, err := podman.New(ctx, podman.Options{PrivateService: true, Owner: "bench-raw"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = be.Close() })
	c := be.Client()
	rl := framework.StartRunlet(t, framework.RunletOptions{PodmanSocket: c.Socket(), LogLevel: "info"})
	ns := framework.Namespace(t)
	api := framework.Get(t).Client.CoreV1().Pods(ns)
	var pods []*v1.Pod
	for i := range 8 {
		p := framework.PodFor(rl.NodeName, ns, fmt.Sprintf("d-%d", i), framework.Busybox("c", "sleep", "3600"))
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		p, _ = api.Create(ctx, p, metav1.CreateOptions{})
		pods = append(pods, p)
	}
	for _, p := range pods {
		framework.WaitForPodPhase(t, ns, p.Name, v1.PodRunning, 3*time.Minute)
	}
	time.Sleep(5 * time.Second)
	for _, p := range pods {
		got, _ := api.Get(ctx, p.Name, metav1.GetOptions{})
		id := strings.TrimPrefix(got.Status.ContainerStatuses[0].ContainerID, "podman://")
		zero := int64(0)
		t0 := time.Now()
		_ = api.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		var apiGone, ctrDead, podGone time.Duration
		for podGone == 0 {
			el := time.Since(t0)
			if apiGone == 0 {
				if _, err := api.Get(ctx, p.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
					apiGone = el
				}
			}
			if ctrDead == 0 {
				in, err := c.InspectContainer(ctx, id)
				if err != nil || !in.State.Running {
					ctrDead = el
				}
			}
			if ps, err := c.ListPods(ctx, labelPodUID+"="+string(p.UID)); err == nil && len(ps) == 0 {
				podGone = el
			}
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Printf("PROBE %s api gone %4dms  container not running %5dms  podman pod gone %5dms\n", p.Name, apiGone.Milliseconds(), ctrDead.Milliseconds(), podGone.Milliseconds())
		time.Sleep(time.Second)
	}
	// raw comparison: stop + remove of a running pod
	for i := range 4 {
		o, err := rawPod(ctx, be, fmt.Sprintf("probe-raw-%d", i), "probe")
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		_ = c.RemovePod(ctx, o.pod)
		fmt.Printf("PROBE raw pod rm -f running pod: %dms\n", time.Since(t0).Milliseconds())
	}
}
