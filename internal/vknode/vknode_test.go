package vknode

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/kubeletserver"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

// pods is a provider that only remembers what it was asked to create and
// to delete.
type pods struct {
	mu      sync.Mutex
	created []string
	deleted []string
}

func (p *pods) CreatePod(_ context.Context, pod *v1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.created = append(p.created, pod.Name)
	return nil
}
func (p *pods) UpdatePod(context.Context, *v1.Pod) error { return nil }
func (p *pods) DeletePod(_ context.Context, pod *v1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deleted = append(p.deleted, pod.Name)
	return nil
}
func (p *pods) GetPod(context.Context, string, string) (*v1.Pod, error) {
	return nil, nil
}
func (p *pods) GetPodStatus(context.Context, string, string) (*v1.PodStatus, error) {
	return nil, nil
}
func (p *pods) GetPods(context.Context) ([]*v1.Pod, error) { return nil, nil }

func (p *pods) names() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.created...)
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestNodeRegistersAndRunsItsPods: the node is registered with its lease,
// serves the kubelet port, and hands the provider the pods bound to it and
// only them (the fake client ignores field selectors, so the selector
// the informer lists with is checked).
func TestNodeRegistersAndRunsItsPods(t *testing.T) {
	client := fake.NewClientset(
		&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "mine"}, Spec: v1.PodSpec{NodeName: "n1"}},
	)
	var selectors []string
	client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		selectors = append(selectors, a.(k8stesting.ListAction).GetListRestrictions().Fields.String())
		return false, nil, nil
	})
	cert, err := kubeletserver.SelfSigned("n1", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	p := &pods{}
	rec := record.NewFakeRecorder(10)
	addr := freeAddr(t)
	spec := BaseNode("n1")
	spec.Status.Capacity = v1.ResourceList{v1.ResourcePods: *resourcePods()}
	n, err := New(Config{
		Name: "n1", Client: client, EventRecorder: rec, Workers: 1, ListenAddr: addr, Pods: NewPodInformer(client, "n1"),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }),
		Node:      spec, Provider: p, NodeProvider: node.NewNaiveNodeProvider(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	if err := n.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil || got.Labels["type"] != "virtual-kubelet" || got.Labels["kubernetes.io/hostname"] != "n1" {
		t.Fatalf("node %v: %v", got, err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, "n1", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Errorf("no node lease: %v", err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(p.names()) > 0, nil
	}); err != nil || len(p.names()) != 1 || p.names()[0] != "mine" {
		t.Errorf("provider created %v; want [mine]", p.names())
	}
	// The framework's bookkeeping (ProviderCreateSuccess) is not the
	// kubelet's; the recorder gets no event for a pod created. The
	// framework records it after CreatePod returns: give it the time.
	select {
	case e := <-rec.Events:
		t.Errorf("event %q recorded for a pod the provider created", e)
	case <-time.After(500 * time.Millisecond):
	}
	if len(selectors) == 0 || selectors[0] != "spec.nodeName=n1" {
		t.Errorf("pods listed with field selectors %q; want spec.nodeName=n1", selectors)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a test's self-signed certificate
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("https://" + addr + "/")
	if err != nil {
		t.Fatalf("kubelet port: %v", err)
	}
	resp.Body.Close()
}

func TestNewRefusesABadAddress(t *testing.T) {
	client := fake.NewClientset()
	_, err := New(Config{Name: "n1", Client: client, EventRecorder: record.NewFakeRecorder(1), ListenAddr: "nope", Pods: NewPodInformer(client, "n1")})
	if err == nil {
		t.Error("listen address without a port accepted")
	}
}

func resourcePods() *resource.Quantity { q := resource.MustParse("110"); return &q }
