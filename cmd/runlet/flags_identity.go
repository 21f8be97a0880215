package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"
)

// identityOptions are the kubelet's flags of the node's client identity.
type identityOptions struct {
	// BootstrapKubeconfig is a credential that may only create CSRs; with
	// it runlet asks for a certificate for system:node:<nodename>.
	BootstrapKubeconfig string
	// CertDir keeps the node's client certificate (and the serving one).
	CertDir string
	// RotateCertificates renews the client certificate before it expires.
	RotateCertificates bool
}

func addIdentityFlags(fs *pflag.FlagSet, o *identityOptions) {
	fs.StringVar(&o.BootstrapKubeconfig, "bootstrap-kubeconfig", "", "kubeconfig of a credential that may only create CSRs (a bootstrap token or a ServiceAccount's): "+
		"runlet asks for a client certificate for system:node:<nodename>, keeps it in --cert-dir and writes --kubeconfig to use it, unless --kubeconfig holds a certificate that is still valid")
	fs.StringVar(&o.CertDir, "cert-dir", "", "directory of the node's certificates (kubelet-client-current.pem, kubelet-server-current.pem); default <root-dir>/pki")
	fs.BoolVar(&o.RotateCertificates, "rotate-certificates", true, "renew the node's client certificate with a new CSR when 70-90 % of its lifetime has passed (with --bootstrap-kubeconfig)")
}

// resolveIdentity fills the defaults that depend on other flags: the cert
// dir under the root dir, and with a bootstrap kubeconfig, where the node's
// own kubeconfig is written: <root-dir>/kubeconfig unless --kubeconfig is
// given on the command line ($KUBECONFIG, a user's, is not the node's).
func (o *options) resolveIdentity(kubeconfigSet bool) error {
	if o.CertDir == "" {
		o.CertDir = filepath.Join(o.RootDir, "pki")
	}
	if o.BootstrapKubeconfig == "" {
		return nil
	}
	if !kubeconfigSet || o.Kubeconfig == "" {
		o.Kubeconfig = filepath.Join(o.RootDir, "kubeconfig")
	}
	if o.Kubeconfig == o.BootstrapKubeconfig {
		return fmt.Errorf("--kubeconfig and --bootstrap-kubeconfig are both %s: runlet writes the node's kubeconfig over --kubeconfig", o.Kubeconfig)
	}
	return nil
}
