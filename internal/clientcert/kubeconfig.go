package clientcert

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/runlet/runlet/internal/atomicfile"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
)

// LoadKubeconfig flattens a kubeconfig file's current context into a REST
// config. A cluster with no server is the one runlet's pod runs in
// (KUBERNETES_SERVICE_HOST and _PORT, as client-go's in-cluster config): a
// chart can hand its ServiceAccount's token over as the bootstrap
// credential in a kubeconfig that cannot know the apiserver's address.
func LoadKubeconfig(path string) (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	loaded, err := rules.Load()
	if err != nil {
		return nil, err
	}
	if ctx := loaded.Contexts[loaded.CurrentContext]; ctx != nil {
		if cl := loaded.Clusters[ctx.Cluster]; cl != nil && cl.Server == "" {
			host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
			if host == "" || port == "" {
				return nil, fmt.Errorf("cluster %q names no server, and runlet does not run in a pod (KUBERNETES_SERVICE_HOST is unset)", ctx.Cluster)
			}
			cl.Server = "https://" + net.JoinHostPort(host, port)
		}
	}
	return clientcmd.NewNonInteractiveClientConfig(*loaded, loaded.CurrentContext, &clientcmd.ConfigOverrides{}, rules).ClientConfig()
}

// stillValid reports whether the kubeconfig at path holds a client
// certificate that has not expired, as the kubelet's bootstrap decides
// whether to bootstrap again. A file that is missing or unreadable as a
// kubeconfig is not valid; one that cannot be stat'ed is an error.
func stillValid(path string, now time.Time) (bool, error) {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg, err := LoadKubeconfig(path)
	if err != nil {
		return false, nil
	}
	certPEM := cfg.CertData
	if len(certPEM) == 0 && cfg.CertFile != "" {
		if certPEM, err = os.ReadFile(cfg.CertFile); err != nil {
			return false, nil
		}
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil || len(certs) == 0 {
		return false, nil
	}
	for _, c := range certs {
		if now.After(c.NotAfter) {
			return false, nil
		}
	}
	return true, nil
}

// writeKubeconfig writes the node's kubeconfig: the bootstrap kubeconfig's
// cluster, and the client certificate and key in the cert dir's current
// file, which the certificate manager keeps up to date. The file names the
// certificate rather than holding it, so a rotation needs no rewrite.
func writeKubeconfig(bootstrap *rest.Config, path, pemPath string) error {
	cluster := &clientcmdapi.Cluster{Server: bootstrap.Host, InsecureSkipTLSVerify: bootstrap.Insecure,
		CertificateAuthority: bootstrap.CAFile, TLSServerName: bootstrap.ServerName}
	if bootstrap.CAFile == "" {
		cluster.CertificateAuthorityData = bootstrap.CAData
	}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"default-cluster": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"default-auth": {ClientCertificate: pemPath, ClientKey: pemPath}},
		Contexts:       map[string]*clientcmdapi.Context{"default-context": {Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default"}},
		CurrentContext: "default-context",
	}
	data, err := clientcmd.Write(cfg)
	if err == nil {
		err = atomicfile.Write(path, data)
	}
	if err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
