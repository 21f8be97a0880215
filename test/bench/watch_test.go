package bench

import (
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"

	"github.com/runlet/runlet/test/e2e/framework"
)

// marks records when the watch first saw something ("running/<pod>", "exited/<pod>", …).
type marks struct {
	mu sync.Mutex
	at map[string]time.Time
	ch map[string]chan struct{}
}

func (m *marks) chanFor(key string) chan struct{} {
	c, ok := m.ch[key]
	if !ok {
		c = make(chan struct{})
		m.ch[key] = c
	}
	return c
}

func (m *marks) set(key string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.at[key]; !ok {
		m.at[key] = now
		close(m.chanFor(key))
	}
}

func (m *marks) wait(key string, timeout time.Duration) (time.Time, bool) {
	m.mu.Lock()
	c := m.chanFor(key)
	m.mu.Unlock()
	select {
	case <-c:
	case <-time.After(timeout):
		return time.Time{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.at[key], true
}

// watchPods runs an informer on the namespace and marks, at the moment the watch delivers them, a
// pod bound to a node, Running, with a terminated container, and deleted.
func watchPods(t *testing.T, ns string) *marks {
	m := &marks{at: map[string]time.Time{}, ch: map[string]chan struct{}{}}
	observe := func(obj any) {
		now := time.Now()
		p, ok := obj.(*v1.Pod)
		if !ok {
			return
		}
		if p.Spec.NodeName != "" {
			m.set("bound/"+p.Name, now)
		}
		if p.Status.Phase == v1.PodRunning {
			m.set("running/"+p.Name, now)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
				m.set("ready/"+p.Name, now)
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Terminated != nil {
				m.set("exited/"+p.Name, now)
			}
		}
		if p.Status.ObservedGeneration > 1 && resized(p) {
			m.set(fmt.Sprintf("resized-%d/%s", p.Status.ObservedGeneration, p.Name), now)
		}
	}
	lw := cache.NewListWatchFromClient(framework.Get(t).Client.CoreV1().RESTClient(), "pods", ns, fields.Everything())
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw, ObjectType: &v1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    observe,
			UpdateFunc: func(_, obj any) { observe(obj) },
			DeleteFunc: func(obj any) {
				now := time.Now()
				if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				if p, ok := obj.(*v1.Pod); ok {
					m.set("gone/"+p.Name, now)
				}
			},
		},
	})
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go ctrl.Run(stop)
	if !cache.WaitForCacheSync(stop, ctrl.HasSynced) {
		t.Fatal("pod informer did not sync")
	}
	return m
}
