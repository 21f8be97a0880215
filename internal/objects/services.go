package objects

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Services keeps the services of the namespaces where the node's pods start
// containers (their service links), one informer per namespace, started on
// the first read and stopped when nobody read it for a while. Services of
// other namespaces are never watched.
type Services struct {
	client kubernetes.Interface
	idle   time.Duration
	now    func() time.Time

	mu   sync.Mutex
	byNS map[string]*nsServices
}

type nsServices struct {
	informer cache.SharedIndexInformer
	stop     chan struct{}
	lastRead time.Time
}

// servicesIdle is how long a namespace's services stay watched after the
// last read: container starts in a namespace come in waves.
const servicesIdle = 10 * time.Minute

// syncTimeout bounds the wait for a new namespace's first listing.
const syncTimeout = 30 * time.Second

// NewServices returns the service source; its janitor runs until stop closes.
func NewServices(client kubernetes.Interface, stop <-chan struct{}) *Services {
	s := &Services{client: client, idle: servicesIdle, now: time.Now, byNS: map[string]*nsServices{}}
	go s.janitor(stop)
	return s
}

// List returns the services of namespace.
func (s *Services) List(namespace string) ([]*v1.Service, error) {
	w := s.watch(namespace)
	done := make(chan struct{})
	t := time.AfterFunc(syncTimeout, func() { close(done) })
	defer t.Stop()
	if !cache.WaitForCacheSync(done, w.informer.HasSynced) {
		return nil, errNotSynced(namespace)
	}
	var out []*v1.Service
	for _, o := range w.informer.GetStore().List() {
		if svc, ok := o.(*v1.Service); ok {
			out = append(out, svc)
		}
	}
	return out, nil
}

func (s *Services) watch(namespace string) *nsServices {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.byNS[namespace]
	if !ok {
		w = &nsServices{informer: corev1informers.NewServiceInformer(s.client, namespace, 0, cache.Indexers{}), stop: make(chan struct{})}
		go w.informer.Run(w.stop)
		s.byNS[namespace] = w
	}
	w.lastRead = s.now()
	return w
}

func (s *Services) janitor(stop <-chan struct{}) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-stop:
			s.dropIdle(time.Time{})
			return
		case <-t.C:
			s.dropIdle(s.now().Add(-s.idle))
		}
	}
}

// dropIdle stops the namespaces not read since before; a zero time stops all.
func (s *Services) dropIdle(before time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ns, w := range s.byNS {
		if before.IsZero() || w.lastRead.Before(before) {
			close(w.stop)
			delete(s.byNS, ns)
		}
	}
}

// Watched lists the namespaces whose services are watched now.
func (s *Services) Watched() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.byNS))
	for ns := range s.byNS {
		out = append(out, ns)
	}
	return out
}

type errNotSynced string

func (e errNotSynced) Error() string {
	return "services of namespace " + string(e) + " could not be listed in time"
}
