package framework

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// KubeletGet calls runlet's kubelet API directly with the cluster admin's
// credentials (the apiserver's node proxy refuses loopback node addresses)
// and returns the body of a 200 answer.
func (r *Runlet) KubeletGet(path string) (string, error) {
	c := cluster
	if c == nil {
		return "", fmt.Errorf("framework: no control plane (TestMain must call framework.Main)")
	}
	rt, err := rest.TransportFor(c.Config)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Transport: rt, Timeout: 30 * time.Second}).Get(r.KubeletURL() + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	return string(b), err
}
