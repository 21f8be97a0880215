package vknode

import (
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// coreFactory shares informers among the core/v1 typed informers
// (corev1informers.New), as client-go's SharedInformerFactory does. That
// factory can also build an informer for any API group, which keeps every
// group's informers and listers in the binary: 2.8 MiB of runlet's
// resident memory for informers a node never starts.
type coreFactory struct {
	client kubernetes.Interface
	resync time.Duration

	mu        sync.Mutex
	informers map[reflect.Type]cache.SharedIndexInformer
	started   map[reflect.Type]bool
}

var _ internalinterfaces.SharedInformerFactory = (*coreFactory)(nil)

func newCoreFactory(client kubernetes.Interface, resync time.Duration) *coreFactory {
	return &coreFactory{client: client, resync: resync,
		informers: map[reflect.Type]cache.SharedIndexInformer{}, started: map[reflect.Type]bool{}}
}

// InformerFor returns the informer of obj's type, built by newFunc the first time.
func (f *coreFactory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := reflect.TypeOf(obj)
	if inf, ok := f.informers[t]; ok {
		return inf
	}
	inf := newFunc(f.client, f.resync)
	f.informers[t] = inf
	return inf
}

// Start runs the informers built so far that do not run yet, until stop closes.
func (f *coreFactory) Start(stop <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for t, inf := range f.informers {
		if !f.started[t] {
			go inf.Run(stop)
			f.started[t] = true
		}
	}
}

// InformerName is nil: the informers publish no metrics, as with
// client-go's factory by default.
func (f *coreFactory) InformerName() *cache.InformerName { return nil }
