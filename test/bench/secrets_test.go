package bench

import (
	"crypto/rand"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/runlet/runlet/test/e2e/framework"
)

// benchSecrets puts cfg.secrets Secrets of 1 KiB that no pod of the node
// refers to in a namespace of their own, reads runlet's memory once it has
// settled, and deletes them: a node's memory must not grow with the cluster.
func benchSecrets(n *node, r *results) {
	if n.cfg.secrets == 0 {
		return
	}
	ns := framework.Namespace(n.t)
	cfg := rest.CopyConfig(framework.Get(n.t).Config)
	cfg.QPS, cfg.Burst = 1000, 1000 // the client's limiter, not the apiserver, would set the pace
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		n.t.Fatal(err)
	}
	api := cs.CoreV1().Secrets(ns)
	progress("runlet: %d unrelated Secrets of 1 KiB in %s", n.cfg.secrets, ns)
	err = parallel(16, n.cfg.secrets, func(i int) error {
		data := make([]byte, 1024)
		_, _ = rand.Read(data)
		s := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%d", i)}, Data: map[string][]byte{"k": data}}
		_, err := api.Create(n.ctx, s, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		n.t.Fatal(err)
	}
	progress("runlet: Secrets created; settling %v", n.cfg.settle)
	n.sleepSettle()
	r.memSecrets = readMem(n.t, n.rl.PID(), n.rl.MetricsURL())
	if err := api.DeleteCollection(n.ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		n.t.Fatal(err)
	}
}
