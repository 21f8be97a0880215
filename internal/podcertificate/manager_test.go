package podcertificate

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/polltest"
	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

const signer = "example.com/signer"

// fixture is a node, a pod with two podCertificate sources, and a client
// that names requests as the apiserver does (generateName).
func fixture(t *testing.T) (*Manager, *fake.Clientset, *v1.Pod, *record.FakeRecorder) {
	t.Helper()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "pod-uid"},
		Spec: v1.PodSpec{ServiceAccountName: "sa", NodeName: "n1"}}
	client := fake.NewClientset(
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}},
		&v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa", UID: "sa-uid"}})
	var n atomic.Int32
	client.PrependReactor("create", "podcertificaterequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		req := a.(k8stesting.CreateAction).GetObject().(*certificatesv1.PodCertificateRequest)
		req.Name = fmt.Sprintf("%s%d", req.GenerateName, n.Add(1))
		req.CreationTimestamp = metav1.Now()
		return false, nil, nil
	})
	rec := record.NewFakeRecorder(10)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	return New(Config{Client: client, NodeName: "n1", Recorder: rec, Log: logtest.Discard()}, stop), client, pod, rec
}

var source = &v1.PodCertificateProjection{SignerName: signer, KeyType: "ECDSAP256", CredentialBundlePath: "creds.pem"}

// pendingRequest waits for the manager's newest request, the nth.
func pendingRequest(t *testing.T, client *fake.Clientset, n int) *certificatesv1.PodCertificateRequest {
	t.Helper()
	var got *certificatesv1.PodCertificateRequest
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := client.CertificatesV1().PodCertificateRequests("ns").List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) < n {
			return false, err
		}
		got = &l.Items[n-1]
		return true, nil
	})
	if err != nil {
		t.Fatalf("request %d never made: %v", n, err)
	}
	return got
}

// issue signs the request's key as a signer would.
func issue(t *testing.T, client *fake.Clientset, req *certificatesv1.PodCertificateRequest, refreshAt time.Time) []byte {
	t.Helper()
	csr, err := x509.ParseCertificateRequest(req.Spec.StubPKCS10Request)
	if err != nil || csr.CheckSignature() != nil {
		t.Fatalf("the request's proof of possession does not hold: %v", err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(csr.PublicKey)
	chain := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: pub}) // stands for a certificate of that key
	req = req.DeepCopy()
	req.Status = certificatesv1.PodCertificateRequestStatus{
		Conditions:       []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue, Reason: "Issued"}},
		CertificateChain: "text before\n" + string(chain),
		BeginRefreshAt:   &metav1.Time{Time: refreshAt},
		NotAfter:         &metav1.Time{Time: refreshAt.Add(time.Hour)},
	}
	if _, err := client.CertificatesV1().PodCertificateRequests("ns").UpdateStatus(context.Background(), req, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return chain
}

func awaitCredentials(t *testing.T, m *Manager, pod *v1.Pod, chain []byte) []byte {
	t.Helper()
	var key []byte
	polltest.Eventually(t, 10*time.Second, "the issued chain", func() bool {
		k, c, err := m.Credentials(pod, "certs", 0, source)
		key = k
		return err == nil && bytes.Equal(c, chain)
	})
	return key
}

// TestIssueAndRefresh: the first look starts a request naming the pod, its
// service account and the node; once issued, the key and the cleaned chain
// are served; past beginRefreshAt a new request is made and the old
// credentials are served until it is issued.
func TestIssueAndRefresh(t *testing.T) {
	m, client, pod, _ := fixture(t)
	if _, _, err := m.Credentials(pod, "certs", 0, source); err == nil {
		t.Fatal("credentials before any request was issued")
	}
	req := pendingRequest(t, client, 1)
	s := req.Spec
	if s.SignerName != signer || s.PodUID != pod.UID || s.ServiceAccountUID != "sa-uid" || s.NodeName != "n1" || s.NodeUID != "node-uid" ||
		len(req.OwnerReferences) != 1 || req.OwnerReferences[0].UID != pod.UID {
		t.Errorf("request %+v %+v", s, req.OwnerReferences)
	}
	_, _, err := m.Credentials(pod, "certs", 0, source)
	if err == nil || !strings.Contains(err.Error(), "waiting for signer "+signer) {
		t.Errorf("while pending: %v", err)
	}
	chain := issue(t, client, req, time.Now().Add(time.Hour))
	key := awaitCredentials(t, m, pod, chain)
	if b, _ := pem.Decode(key); b == nil || b.Type != "PRIVATE KEY" {
		t.Fatalf("key %q", key)
	}

	m.mu.Lock()
	m.now = func() time.Time { return time.Now().Add(2 * time.Hour) } // past beginRefreshAt and its jitter
	m.mu.Unlock()
	m.queueAll()
	refresh := pendingRequest(t, client, 2)
	if k, c, err := m.Credentials(pod, "certs", 0, source); err != nil || !bytes.Equal(k, key) || !bytes.Equal(c, chain) {
		t.Errorf("during the refresh: %v; want the old credentials", err)
	}
	newChain := issue(t, client, refresh, time.Now().Add(3*time.Hour))
	if newKey := awaitCredentials(t, m, pod, newChain); bytes.Equal(newKey, key) {
		t.Error("the refresh kept the old key")
	}
}

// TestDeniedIsFinal: a denied request is the source's end, with the
// kubelet's event, and no new request follows.
func TestDeniedIsFinal(t *testing.T) {
	m, client, pod, rec := fixture(t)
	_, _, _ = m.Credentials(pod, "certs", 0, source)
	req := pendingRequest(t, client, 1).DeepCopy()
	req.Status.Conditions = []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeDenied, Status: metav1.ConditionTrue, Reason: "Policy", Message: "not this pod"}}
	if _, err := client.CertificatesV1().PodCertificateRequests("ns").UpdateStatus(context.Background(), req, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, _, err := m.Credentials(pod, "certs", 0, source)
		return err != nil && strings.Contains(err.Error(), "was denied"), nil
	})
	if err != nil {
		t.Fatal("the denial never showed")
	}
	select {
	case e := <-rec.Events:
		if !strings.HasPrefix(e, "Warning Denied") || !strings.Contains(e, "not this pod") {
			t.Errorf("event %q", e)
		}
	case <-time.After(5 * time.Second):
		t.Error("no event")
	}
	m.queueAll()
	time.Sleep(100 * time.Millisecond)
	if l, _ := client.CertificatesV1().PodCertificateRequests("ns").List(context.Background(), metav1.ListOptions{}); len(l.Items) != 1 {
		t.Errorf("%d requests after a denial; want no new one", len(l.Items))
	}
}
