package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/podman"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/test/e2e/framework"
)

// rawLabel marks the raw pods of one run, so that cleanup finds exactly them.
const rawLabel = "io.runlet.bench"

type rawObj struct{ pod, ctr string }

// benchRaw is the physical limit: the same pods as runlet's, straight through the libpod API.
func benchRaw(t *testing.T, ctx context.Context, cfg config, be *podman.Backend, run string, r *results) {
	c := be.Client()
	var seq atomic.Int64
	start := func() (rawObj, error) {
		return rawPod(ctx, be, fmt.Sprintf("bench-raw-%s-%d", run, seq.Add(1)), run)
	}
	if _, err := start(); err != nil { // warm-up, not counted
		t.Fatal(err)
	}

	progress("raw: %d sequential pod starts", cfg.n)
	var pods []rawObj
	for range cfg.n {
		t0 := time.Now()
		p, err := start()
		if err != nil {
			t.Fatal(err)
		}
		r.rawStart = append(r.rawStart, time.Since(t0))
		pods = append(pods, p)
	}

	progress("raw: %d container exits (kill → inspect exited)", len(pods))
	for _, p := range pods {
		t0 := time.Now()
		if err := c.KillContainer(ctx, p.ctr, "SIGKILL"); err != nil {
			t.Fatal(err)
		}
		for {
			in, err := c.InspectContainer(ctx, p.ctr)
			if err != nil {
				t.Fatal(err)
			}
			if !in.State.Running {
				r.rawKill = append(r.rawKill, time.Since(t0))
				r.rawExit = append(r.rawExit, time.Since(in.State.FinishedAt))
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	removeRaw(ctx, c, run)

	for i, size := range cfg.bursts {
		pods := rawBurst(t, cfg, size, start, r)
		if i == 0 {
			progress("raw: %d deletes (pod rm -f)", min(cfg.n, len(pods)))
			for _, p := range pods[:min(cfg.n, len(pods))] {
				t0 := time.Now()
				if err := c.RemovePod(ctx, p.pod); err != nil {
					t.Fatal(err)
				}
				r.rawDelete = append(r.rawDelete, time.Since(t0))
			}
		}
		removeRaw(ctx, c, run)
	}
}

// rawBurst starts size pods from cfg.clients clients at once, as runlet's burst creates them.
func rawBurst(t *testing.T, cfg config, size int, start func() (rawObj, error), r *results) []rawObj {
	progress("raw: burst of %d pods, %d clients", size, cfg.clients)
	pods := make([]rawObj, size)
	t0 := time.Now()
	err := parallel(cfg.clients, size, func(i int) (err error) {
		pods[i], err = start()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r.rawBurst[size] = float64(size) / time.Since(t0).Seconds()
	return pods
}

// rawPod creates a pod with one busybox `sleep 3600` container and starts it (which starts the infra
// container too), until inspect says running: what runlet does for a pod, minus Kubernetes.
func rawPod(ctx context.Context, be *podman.Backend, name, run string) (rawObj, error) {
	return rawPodIn(ctx, be, name, run, "")
}

// rawPodIn is rawPod on podman's bridge (netns ""), or in the network namespace netns, which the
// container joins by path as runlet's podman backend does it.
func rawPodIn(ctx context.Context, be *podman.Backend, name, run, netns string) (rawObj, error) {
	c := be.Client()
	labels := map[string]string{rawLabel: run}
	ps := libpod.PodSpec{Name: name, Labels: labels, SharedNamespaces: []string{"net", "ipc", "uts"}}
	cs := libpod.ContainerSpec{
		Name: name + "-c", Image: framework.BusyboxImage, Entrypoint: []string{"sleep", "3600"},
		Labels: labels, RLimits: be.RLimits(), OCIRuntime: be.OCIRuntime(), RestartPolicy: "no",
	}
	if netns != "" {
		ps.NetNS, ps.SharedNamespaces = &libpod.Namespace{NSMode: "none"}, []string{"ipc", "uts"}
		cs.NetNS = &libpod.Namespace{NSMode: "path", Value: netns}
	}
	pod, err := c.CreatePod(ctx, ps)
	if err != nil {
		return rawObj{}, err
	}
	cs.Pod = pod
	ctr, err := c.CreateContainer(ctx, cs)
	if err != nil {
		return rawObj{pod: pod}, err
	}
	if err := c.StartContainer(ctx, ctr); err != nil {
		return rawObj{pod, ctr}, err
	}
	for {
		in, err := c.InspectContainer(ctx, ctr)
		if err != nil || in.State.Running {
			return rawObj{pod, ctr}, err
		}
		if in.State.Status == "exited" {
			return rawObj{pod, ctr}, fmt.Errorf("raw container %s exited: %s", name, in.State.Error)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// removeRaw removes every podman pod of the run.
func removeRaw(ctx context.Context, c *libpod.Client, run string) {
	ps, err := c.ListPods(ctx, rawLabel+"="+run)
	if err != nil {
		progress("raw cleanup: %v", err)
		return
	}
	for _, p := range ps {
		if err := c.RemovePod(ctx, p.ID); err != nil {
			progress("raw cleanup: %v", err)
		}
	}
}

// parallel runs fn(0..n-1) on the given number of workers and returns the errors joined.
func parallel(workers, n int, fn func(i int) error) error {
	idx := make(chan int)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range workers {
		wg.Go(func() {
			for i := range idx {
				if err := fn(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		idx <- i
	}
	close(idx)
	wg.Wait()
	return errors.Join(errs...)
}
