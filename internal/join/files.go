package join

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// Paths are the node's files: those join writes and those runlet keeps.
type Paths struct {
	// BootstrapKubeconfig holds the bootstrap token: it may only make CSRs.
	BootstrapKubeconfig string
	// Kubeconfig is written by runlet after its TLS bootstrap; join only
	// names it.
	Kubeconfig string
	// Config is the KubeletConfiguration.
	Config string
	// CAFile is the cluster CA from cluster-info.
	CAFile string
	// CertDir is where runlet keeps its client certificate.
	CertDir string
}

// DefaultPaths are kubeadm's layout moved to runlet's directories:
// configDir (/etc/runlet) for what join writes, rootDir for runlet's state.
func DefaultPaths(configDir, rootDir string) Paths {
	return Paths{
		BootstrapKubeconfig: filepath.Join(configDir, "bootstrap-kubeconfig"),
		Kubeconfig:          filepath.Join(configDir, "kubeconfig"),
		Config:              filepath.Join(configDir, "config.yaml"),
		CAFile:              filepath.Join(configDir, "pki", "ca.crt"),
		CertDir:             filepath.Join(rootDir, "pki"),
	}
}

// File is one file join writes.
type File struct {
	Path string
	Data []byte
	Mode fs.FileMode
}

// bootstrapUser is the bootstrap kubeconfig's user, kubeadm's TokenUser.
const bootstrapUser = "tls-bootstrap-token-user"

// clusterName is kubeadm's default cluster name.
const clusterName = "kubernetes"

// RenderFiles makes the bootstrap kubeconfig, the KubeletConfiguration and
// the CA file from what discovery trusts.
func RenderFiles(p Paths, info *ClusterInfo, token Token) ([]File, error) {
	kc, err := bootstrapKubeconfig(info, token)
	if err != nil {
		return nil, err
	}
	cfg, err := renderKubeletConfiguration(p)
	if err != nil {
		return nil, err
	}
	return []File{
		{Path: p.CAFile, Data: info.CAData, Mode: 0o644},
		{Path: p.Config, Data: cfg, Mode: 0o644},
		{Path: p.BootstrapKubeconfig, Data: kc, Mode: 0o600},
	}, nil
}

func bootstrapKubeconfig(info *ClusterInfo, token Token) ([]byte, error) {
	ctxName := bootstrapUser + "@" + clusterName
	cfg := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{
			clusterName: {Server: info.Server, CertificateAuthorityData: info.CAData},
		},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{
			bootstrapUser: {Token: token.String()},
		},
		Contexts: map[string]*clientcmdapi.Context{
			ctxName: {Cluster: clusterName, AuthInfo: bootstrapUser},
		},
		CurrentContext: ctxName,
	}
	b, err := clientcmd.Write(cfg)
	if err != nil {
		return nil, fmt.Errorf("rendering the bootstrap kubeconfig: %w", err)
	}
	return b, nil
}

// kubeletConfiguration is the part of the KubeletConfiguration join sets.
// The upstream type marshals every zero field (syncFrequency: 0s, ...),
// which would read as settings; this one says only what join means.
type kubeletConfiguration struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	RotateCertificates bool   `json:"rotateCertificates"`
	Authentication     struct {
		X509 struct {
			ClientCAFile string `json:"clientCAFile"`
		} `json:"x509"`
	} `json:"authentication"`
}

func renderKubeletConfiguration(p Paths) ([]byte, error) {
	c := kubeletConfiguration{
		APIVersion:         "kubelet.config.k8s.io/v1beta1",
		Kind:               "KubeletConfiguration",
		RotateCertificates: true,
	}
	c.Authentication.X509.ClientCAFile = p.CAFile
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("rendering the KubeletConfiguration: %w", err)
	}
	return append([]byte("# written by runlet join\n"), b...), nil
}

// WriteFiles writes files so that each is either its old self or whole:
// all are written to temporary files beside their targets first, and only
// then renamed into place.
func WriteFiles(files []File) error {
	tmps := make([]string, 0, len(files))
	defer func() {
		for _, t := range tmps {
			_ = os.Remove(t) // gone already once renamed
		}
	}()
	for _, f := range files {
		t, err := writeTemp(f)
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
		tmps = append(tmps, t)
	}
	for i, f := range files {
		if err := os.Rename(tmps[i], f.Path); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
		if err := syncDir(filepath.Dir(f.Path)); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
	}
	return nil
}

// writeTemp writes f's data, with f's mode from the start (a token never
// sits in a world-readable file), to a new file beside f.Path.
func writeTemp(f File) (string, error) {
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	t, err := os.CreateTemp(dir, "."+filepath.Base(f.Path)+".tmp-*")
	if err != nil {
		return "", err
	}
	err = t.Chmod(f.Mode)
	if err == nil {
		_, err = t.Write(f.Data)
	}
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(t.Name())
		return "", err
	}
	return t.Name(), nil
}

// syncDir makes a rename into dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
