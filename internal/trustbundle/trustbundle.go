// Package trustbundle serves the trust anchors of ClusterTrustBundles to
// projected volumes, as the kubelet's clustertrustbundle manager does: a
// watch of certificates.k8s.io/v1 ClusterTrustBundles, started the first
// time a pod asks for one (most nodes never do), and answers from its cache,
// so volumes rewritten on each sync follow the bundles.
package trustbundle

import (
	"context"
	"encoding/pem"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
)

// syncWait is how long the first request waits for the watch to fill its
// cache, as the kubelet does; a request before that fails and is retried
// with the pod's next sync.
const syncWait = 10 * time.Second

// Manager answers trust-anchor requests from a watch of the API.
type Manager struct {
	client kubernetes.Interface
	stop   <-chan struct{}

	mu     sync.Mutex
	lister certlisters.ClusterTrustBundleLister
	synced cache.InformerSynced
}

// New returns a manager that starts its watch on first use and ends it when
// stop closes.
func New(client kubernetes.Interface, stop <-chan struct{}) *Manager {
	return &Manager{client: client, stop: stop}
}

// ByName is the bundle's anchors; a missing bundle is empty when allowMissing.
func (m *Manager) ByName(ctx context.Context, name string, allowMissing bool) ([]byte, error) {
	lister, err := m.ensure(ctx)
	if err != nil {
		return nil, err
	}
	ctb, err := lister.Get(name)
	if apierrors.IsNotFound(err) && allowMissing {
		return []byte{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("while getting ClusterTrustBundle: %w", err)
	}
	return normalize([]*certificatesv1.ClusterTrustBundle{ctb}), nil
}

// BySigner is the anchors of every bundle of signer whose labels match sel
// (nil matches nothing, empty matches all); none is an error unless
// allowMissing.
func (m *Manager) BySigner(ctx context.Context, signer string, sel *metav1.LabelSelector, allowMissing bool) ([]byte, error) {
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("while parsing label selector: %w", err)
	}
	lister, err := m.ensure(ctx)
	if err != nil {
		return nil, err
	}
	all, err := lister.List(selector)
	if err != nil {
		return nil, fmt.Errorf("while listing ClusterTrustBundles matching label selector %v: %w", sel, err)
	}
	var matched []*certificatesv1.ClusterTrustBundle
	for _, ctb := range all {
		if ctb.Spec.SignerName == signer {
			matched = append(matched, ctb)
		}
	}
	if len(matched) == 0 {
		if allowMissing {
			return []byte{}, nil
		}
		return nil, fmt.Errorf("combination of signerName and labelSelector matched zero ClusterTrustBundles")
	}
	return normalize(matched), nil
}

// ensure starts the watch once the API is known to serve the resource.
func (m *Manager) ensure(ctx context.Context) (certlisters.ClusterTrustBundleLister, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lister == nil {
		if err := m.served(); err != nil {
			return nil, err
		}
		factory := informers.NewSharedInformerFactory(m.client, 0)
		inf := factory.Certificates().V1().ClusterTrustBundles()
		m.lister, m.synced = inf.Lister(), inf.Informer().HasSynced
		factory.Start(m.stop)
	}
	if !m.synced() {
		wait, cancel := context.WithTimeout(ctx, syncWait)
		defer cancel()
		if !cache.WaitForCacheSync(wait.Done(), m.synced) {
			return nil, fmt.Errorf("ClusterTrustBundle informer has not yet synced")
		}
	}
	return m.lister, nil
}

func (m *Manager) served() error {
	gv := certificatesv1.SchemeGroupVersion.String()
	res, err := m.client.Discovery().ServerResourcesForGroupVersion(gv)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cannot tell whether the API serves %s ClusterTrustBundles: %w", gv, err)
	}
	if res != nil {
		for _, r := range res.APIResources {
			if r.Name == "clustertrustbundles" {
				return nil
			}
		}
	}
	return fmt.Errorf("the API server does not serve %s ClusterTrustBundles", gv)
}

// normalize is the kubelet's: every distinct certificate of the bundles, as
// PEM, in random order, so no consumer comes to rely on an order.
func normalize(ctbs []*certificatesv1.ClusterTrustBundle) []byte {
	anchors := sets.Set[string]{}
	for _, ctb := range ctbs {
		rest := []byte(ctb.Spec.TrustBundle)
		for {
			var b *pem.Block
			b, rest = pem.Decode(rest)
			if b == nil {
				break
			}
			anchors.Insert(string(b.Bytes))
		}
	}
	list := sets.List(anchors)
	rand.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	out := []byte{}
	for _, a := range list {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte(a)})...)
	}
	return out
}
