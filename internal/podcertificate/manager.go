// Package podcertificate issues the certificates of podCertificate projected
// volume sources, as the kubelet's podcertificate.IssuingManager does: for
// each source of each pod it makes a key pair and a PodCertificateRequest
// (certificates.k8s.io/v1) naming the pod, its service account and the
// node, waits for the signer to issue, deny or fail it, hands the key and
// chain to the projected volume, and asks again once the certificate's
// beginRefreshAt has passed, serving the old one meanwhile. A denied or
// failed request is final for that source, with the kubelet's event.
//
// The requests are watched with one informer of the node's requests,
// started on first use, so a node whose pods use no pod certificate keeps
// no watch.
package podcertificate

import (
	"context"
	"fmt"
	mathrand "math/rand/v2"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// The kubelet's timings: a request not seen 10 minutes after its creation
// was deleted and is made again; every projection is looked at once a
// minute for its refresh; refreshes spread over 5 minutes.
const (
	assumeDeletedAfter = 10 * time.Minute
	refreshPass        = time.Minute
	refreshJitter      = 5 * time.Minute
	retryAfter         = 5 * time.Second
)

// Config wires a Manager.
type Config struct {
	Client   kubernetes.Interface
	NodeName string
	Recorder record.EventRecorder
	Log      logrus.FieldLogger
}

// Manager issues and refreshes pods' certificates.
type Manager struct {
	cfg  Config
	stop <-chan struct{}
	now  func() time.Time

	start sync.Once
	pcrs  certlisters.PodCertificateRequestLister
	kick  chan struct{}

	mu      sync.Mutex
	records map[key]*projection
	queued  map[key]bool
}

// key names one podCertificate source: the pod, its volume, the source's
// index among the volume's sources.
type key struct {
	uid    types.UID
	volume string
	index  int
}

// New returns a Manager whose work ends when stop closes.
func New(cfg Config, stop <-chan struct{}) *Manager {
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	return &Manager{cfg: cfg, stop: stop, now: time.Now, kick: make(chan struct{}, 1),
		records: map[key]*projection{}, queued: map[key]bool{}}
}

// Credentials returns the PEM private key and certificate chain of the
// podCertificate source at index of the pod's projected volume, once
// issued. Until then it says what it waits for, and the first call starts
// the issuance.
func (m *Manager) Credentials(pod *v1.Pod, volume string, index int, src *v1.PodCertificateProjection) (privateKey, chain []byte, err error) {
	m.start.Do(m.run)
	k := key{uid: pod.UID, volume: volume, index: index}
	m.mu.Lock()
	p, ok := m.records[k]
	if !ok {
		p = &projection{}
		m.records[k] = p
	}
	m.mu.Unlock()
	p.mu.Lock()
	p.pod, p.src = pod.DeepCopy(), *src.DeepCopy()
	p.mu.Unlock()
	if !ok {
		m.queue(k)
	}
	return p.credentials(src.SignerName)
}

// Forget drops a pod's projections: the pod is gone from the node.
func (m *Manager) Forget(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.records {
		if k.uid == uid {
			delete(m.records, k)
			delete(m.queued, k)
		}
	}
}

// run starts the informer of the node's requests and the worker.
func (m *Manager) run() {
	inf := certinformers.NewFilteredPodCertificateRequestInformer(m.cfg.Client, v1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", m.cfg.NodeName).String()
		})
	requeue := func(obj any) {
		if pcr, ok := obj.(*certificatesv1.PodCertificateRequest); ok {
			m.queuePod(pcr.Spec.PodUID)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: requeue, UpdateFunc: func(_, obj any) { requeue(obj) }, DeleteFunc: requeue,
	})
	m.pcrs = certlisters.NewPodCertificateRequestLister(inf.GetIndexer())
	go inf.Run(m.stop)
	go m.work(inf.HasSynced)
}

// work handles the queued projections, and every one once a minute for
// its refresh, until stop closes.
func (m *Manager) work(synced func() bool) {
	if !cache.WaitForCacheSync(m.stop, synced) {
		return
	}
	t := time.NewTicker(refreshPass)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.queueAll()
		case <-m.kick:
		}
		for _, k := range m.take() {
			if err := m.handle(k); err != nil {
				m.cfg.Log.WithError(err).WithField("pod", k.uid).WithField("volume", k.volume).Warn("pod certificate: retrying")
				time.AfterFunc(retryAfter, func() { m.queue(k) })
			}
		}
	}
}

func (m *Manager) queue(k key) {
	m.mu.Lock()
	m.queued[k] = true
	m.mu.Unlock()
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

func (m *Manager) queuePod(uid types.UID) {
	m.mu.Lock()
	var keys []key
	for k := range m.records {
		if k.uid == uid {
			keys = append(keys, k)
		}
	}
	m.mu.Unlock()
	for _, k := range keys {
		m.queue(k)
	}
}

func (m *Manager) queueAll() {
	m.mu.Lock()
	var keys []key
	for k := range m.records {
		keys = append(keys, k)
	}
	m.mu.Unlock()
	for _, k := range keys {
		m.queue(k)
	}
}

func (m *Manager) take() []key {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []key
	for k := range m.queued {
		if _, ok := m.records[k]; ok {
			out = append(out, k)
		}
		delete(m.queued, k)
	}
	return out
}

// handle moves one projection on, as far as it can now.
func (m *Manager) handle(k key) error {
	m.mu.Lock()
	p, ok := m.records[k]
	m.mu.Unlock()
	if !ok {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := m.now()
	switch {
	case p.state == stateInitial, p.state == stateFresh && !now.Before(p.beginRefreshAt):
		return m.request(p, now)
	case p.state == stateWait:
		return m.await(p, now)
	}
	return nil
}

// request makes a key pair and asks the signer for a certificate of it.
func (m *Manager) request(p *projection, now time.Time) error {
	ctx := context.Background()
	pod := p.pod
	sa, err := m.cfg.Client.CoreV1().ServiceAccounts(pod.Namespace).Get(ctx, pod.Spec.ServiceAccountName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("while fetching service account: %w", err)
	}
	node, err := m.cfg.Client.CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("while fetching the node: %w", err)
	}
	keyPEM, proof, err := newKeyAndProof(p.src.KeyType)
	if err != nil {
		return err
	}
	req := &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: pod.Namespace, GenerateName: "req-",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}},
		},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: p.src.SignerName, PodName: pod.Name, PodUID: pod.UID,
			ServiceAccountName: pod.Spec.ServiceAccountName, ServiceAccountUID: sa.UID,
			NodeName: types.NodeName(m.cfg.NodeName), NodeUID: node.UID,
			MaxExpirationSeconds: p.src.MaxExpirationSeconds, StubPKCS10Request: proof,
			UnverifiedUserAnnotations: p.src.UserAnnotations,
		},
	}
	req, err = m.cfg.Client.CertificatesV1().PodCertificateRequests(pod.Namespace).Create(ctx, req, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("while creating a PodCertificateRequest: %w", err)
	}
	p.state, p.pending, p.pendingKey = stateWait, req.Name, keyPEM
	p.abandonAt = req.CreationTimestamp.Add(assumeDeletedAfter + jitter())
	return nil
}

// await reads the pending request's outcome.
func (m *Manager) await(p *projection, now time.Time) error {
	pcr, err := m.pcrs.PodCertificateRequests(p.pod.Namespace).Get(p.pending)
	if err != nil {
		if !now.After(p.abandonAt) {
			return nil // informer lag: its event brings the request back
		}
		gone := p.pending
		p.pending, p.pendingKey = "", nil
		p.state = stateInitial
		if len(p.chain) > 0 {
			p.state = stateFresh
		}
		return fmt.Errorf("PodCertificateRequest %s/%s appears to have been deleted", p.pod.Namespace, gone)
	}
	name := pcr.Namespace + "/" + pcr.Name
	for _, c := range pcr.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
			p.state, p.reason, p.message = stateEnded, c.Type, fmt.Sprintf("PodCertificateRequest %s was %s, reason=%q, message=%q", name, verb(c.Type), c.Reason, c.Message)
			p.key, p.chain = nil, nil
			if m.cfg.Recorder != nil {
				m.cfg.Recorder.Event(p.pod, v1.EventTypeWarning, c.Type, p.message)
			}
			return nil
		case certificatesv1.PodCertificateRequestConditionTypeIssued:
			p.state, p.key, p.chain = stateFresh, p.pendingKey, cleanChain([]byte(pcr.Status.CertificateChain))
			p.pending, p.pendingKey = "", nil
			if pcr.Status.BeginRefreshAt != nil {
				p.beginRefreshAt = pcr.Status.BeginRefreshAt.Add(jitter())
			}
			return nil
		}
	}
	return nil
}

func verb(condition string) string {
	if condition == certificatesv1.PodCertificateRequestConditionTypeDenied {
		return "denied"
	}
	return "failed"
}

func jitter() time.Duration { return time.Duration(mathrand.Int64N(int64(refreshJitter))) }
