package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// testWebhookFromAPod: the API server calls a validating webhook that a runlet pod serves, through its
// Service (kube-proxy's rules on the host), as cluster add-ons and operators are served.
func testWebhookFromAPod(t *testing.T, node, ns string) {
	c := framework.Get(t).Client
	ctx := context.Background()
	caPEM, certPEM, keyPEM := webhookCerts(t, "webhook."+ns+".svc")
	if _, err := c.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "webhook-tls"}, Type: v1.SecretTypeTLS,
		Data: map[string][]byte{v1.TLSCertKey: certPEM, v1.TLSPrivateKeyKey: keyPEM},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	srv := v1.Container{Name: "webhook", Image: "localhost/runlet/testserver:latest", ImagePullPolicy: v1.PullIfNotPresent,
		Args:         []string{"--grpc-port=0", "--tls-cert-file=/tls/tls.crt", "--tls-private-key-file=/tls/tls.key"},
		VolumeMounts: []v1.VolumeMount{{Name: "tls", MountPath: "/tls", ReadOnly: true}},
		ReadinessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(8443)}},
			PeriodSeconds: 1}}
	p := framework.PodFor(node, ns, "webhook", srv)
	p.Spec.Volumes = []v1.Volume{{Name: "tls", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "webhook-tls"}}}}
	framework.CreatePod(t, p)
	if _, err := c.CoreV1().Services(ns).Create(ctx, &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "webhook"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "webhook"},
			Ports: []v1.ServicePort{{Port: 443, TargetPort: intstr.FromInt32(8443)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitForPodReady(t, ns, "webhook", 2*time.Minute)

	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "runlet-e2e-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "deny.runlet.e2e",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				Service:  &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "webhook", Path: ptr.To("/validate"), Port: ptr.To[int32](443)},
				CABundle: caPEM,
			},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			TimeoutSeconds:          ptr.To[int32](10),
		}},
	}
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), cfg.Name, metav1.DeleteOptions{})
	})
	var last error
	framework.Eventually(t, time.Minute, "the webhook in the pod refusing a labelled ConfigMap", func() (bool, error) {
		cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "denied-", Labels: map[string]string{"runlet.e2e/deny": "yes"}}}
		_, last = c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		return last != nil && strings.Contains(last.Error(), "testserver webhook denies"), nil
	})
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "allowed"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a ConfigMap the webhook allows was refused: %v", err)
	}
}

// webhookCerts makes a CA and a serving certificate for host, PEM-encoded.
func webhookCerts(t *testing.T, host string) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "runlet-e2e-webhook-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
