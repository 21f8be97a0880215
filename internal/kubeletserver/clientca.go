package kubeletserver

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
)

// Where the apiserver publishes the CA of its --client-ca-file. Aggregated
// API servers read it from there to verify the apiserver's client
// certificate; it verifies the apiserver's kubelet-client certificate too.
const (
	ClientCANamespace = "kube-system"
	ClientCAConfigMap = "extension-apiserver-authentication"
	ClientCAKey       = "client-ca-file"
)

// ClientCASource names where client certificates are verified from, for
// runlet's start-up log.
func ClientCASource(file string) string {
	if file != "" {
		return file
	}
	return ClientCANamespace + "/" + ClientCAConfigMap + " (" + ClientCAKey + ")"
}

// clientCA is the CA bundle that verifies client certificates: the file when
// one is given (re-read when it changes), else the apiserver's client CA
// from the cluster (followed when the ConfigMap changes). Until the
// ConfigMap has been read, client certificates are refused and bearer
// tokens still work.
func clientCA(ctx context.Context, client kubernetes.Interface, o AuthOptions) (dynamiccertificates.CAContentProvider, error) {
	if o.ClientCAFile != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca", o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		go ca.Run(ctx, 1)
		return ca, nil
	}
	ca, err := dynamiccertificates.NewDynamicCAFromConfigMapController("client-ca", ClientCANamespace, ClientCAConfigMap, ClientCAKey, client)
	if err != nil {
		return nil, err
	}
	if o.OnClientCAChange != nil {
		ca.AddListener(listenerFunc(func() { o.OnClientCAChange(ca.CurrentCABundleContent()) }))
	}
	go ca.Run(ctx, 1)
	return ca, nil
}

// listenerFunc adapts a function to dynamiccertificates.Listener.
type listenerFunc func()

func (f listenerFunc) Enqueue() { f() }
