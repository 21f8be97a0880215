package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// TestCrashLoopBackOff checks restarts follow the kubelet's back-off: the
// restart count grows, the waiting reason is CrashLoopBackOff, the last
// exit is kept, and the gaps between restarts grow.
func TestCrashLoopBackOff(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{AutoPodman: true})
	ns := framework.Namespace(t)
	pod := framework.PodFor(rl.NodeName, ns, "crasher", framework.Busybox("main", "sh", "-c", "exit 1"))
	restarts := watchRestarts(t, ns, pod.Name)
	framework.CreatePod(t, pod)

	var at []time.Time
	var sawBackOff bool
	deadline := time.After(150 * time.Second)
	for len(at) < 3 {
		select {
		case ev := <-restarts:
			if ev.backOff {
				sawBackOff = true
			}
			if ev.restarted {
				at = append(at, ev.when)
			}
		case <-deadline:
			t.Fatalf("saw %d restarts in 150s, want 3\n%s", len(at), framework.DescribePod(ns, pod.Name))
		}
	}
	if !sawBackOff {
		t.Error("never saw waiting reason CrashLoopBackOff with a back-off message")
	}
	if gap1, gap2 := at[1].Sub(at[0]), at[2].Sub(at[1]); gap2 <= gap1 {
		t.Errorf("restart gaps did not grow: %v then %v", gap1, gap2)
	}
	p := framework.WaitForPod(t, ns, pod.Name, 10*time.Second, func(*v1.Pod) bool { return true })
	cs := p.Status.ContainerStatuses[0]
	if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 1 {
		t.Errorf("lastState.terminated = %+v, want exit code 1", cs.LastTerminationState.Terminated)
	}
	if p.Status.Phase != v1.PodRunning {
		t.Errorf("phase %s, want Running (restartPolicy Always)", p.Status.Phase)
	}
}

type restartEvent struct {
	when      time.Time
	restarted bool
	backOff   bool
}

// watchRestarts reports each increase of the first container's restartCount
// and each CrashLoopBackOff status, as the watch delivers them.
func watchRestarts(t *testing.T, ns, name string) <-chan restartEvent {
	w, err := framework.Get(t).Client.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
	})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	t.Cleanup(w.Stop)
	out := make(chan restartEvent, 100)
	go func() {
		last := int32(0)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*v1.Pod)
			if !ok || len(p.Status.ContainerStatuses) == 0 {
				continue
			}
			cs := p.Status.ContainerStatuses[0]
			e := restartEvent{when: time.Now(), restarted: cs.RestartCount > last}
			last = max(last, cs.RestartCount)
			if w := cs.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" && len(w.Message) > 0 {
				e.backOff = true
			}
			if e.restarted || e.backOff {
				out <- e
			}
		}
	}()
	return out
}
