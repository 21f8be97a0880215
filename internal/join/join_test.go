package join

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// joinOptions joins c with everything under a temporary config and root
// dir; exec records the command instead of running it.
func joinOptions(t *testing.T, c *fakeCluster, exec *[]string) (Options, string) {
	t.Helper()
	dir := t.TempDir()
	cfgDir, root := filepath.Join(dir, "etc", "runlet"), filepath.Join(dir, "var", "lib", "runlet")
	return Options{
		Discovery: c.discovery(),
		Paths:     DefaultPaths(cfgDir, root),
		RootDir:   root,
		NodeName:  "node-a",
		Binary:    "/usr/local/bin/runlet",
		ExtraArgs: []string{"--runtime=runc"},
		Out:       &bytes.Buffer{},
		Exec: func(argv0 string, argv, env []string) error {
			*exec = append([]string{}, argv...)
			return nil
		},
	}, cfgDir
}

func TestRunWritesFilesAndExecsRunlet(t *testing.T) {
	c := newFakeCluster(t)
	var argv []string
	o, cfgDir := joinOptions(t, c, &argv)
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	p := o.Paths

	kc, err := clientcmd.LoadFromFile(p.BootstrapKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := kc.Contexts[kc.CurrentContext]
	if ctx == nil || kc.Clusters[ctx.Cluster] == nil || kc.AuthInfos[ctx.AuthInfo] == nil {
		t.Fatalf("bootstrap kubeconfig has no complete current context: %+v", kc)
	}
	if cl := kc.Clusters[ctx.Cluster]; cl.Server != c.srv.URL || string(cl.CertificateAuthorityData) != string(c.caPEM) {
		t.Errorf("bootstrap kubeconfig's cluster is %q with CA %q; want cluster-info's", cl.Server, cl.CertificateAuthorityData)
	}
	if tok := kc.AuthInfos[ctx.AuthInfo].Token; tok != testToken {
		t.Errorf("bootstrap kubeconfig's token is %q", tok)
	}

	b, err := os.ReadFile(p.Config)
	if err != nil {
		t.Fatal(err)
	}
	var kcfg kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(b, &kcfg); err != nil {
		t.Fatalf("config.yaml is not a KubeletConfiguration: %v\n%s", err, b)
	}
	if kcfg.APIVersion != "kubelet.config.k8s.io/v1beta1" || kcfg.Kind != "KubeletConfiguration" ||
		!kcfg.RotateCertificates || kcfg.Authentication.X509.ClientCAFile != p.CAFile {
		t.Errorf("config.yaml:\n%s", b)
	}
	if ca, _ := os.ReadFile(p.CAFile); string(ca) != string(c.caPEM) {
		t.Errorf("ca.crt is %q", ca)
	}

	for path, mode := range map[string]os.FileMode{p.BootstrapKubeconfig: 0o600, p.Config: 0o644, p.CAFile: 0o644} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s has mode %04o, want %04o", path, fi.Mode().Perm(), mode)
		}
	}
	if got := listFiles(t, cfgDir); !reflect.DeepEqual(got, []string{"bootstrap-kubeconfig", "config.yaml", "pki/ca.crt"}) {
		t.Errorf("files in the config dir: %v (no temporary file should be left)", got)
	}

	want := []string{"/usr/local/bin/runlet",
		"--bootstrap-kubeconfig", filepath.Join(cfgDir, "bootstrap-kubeconfig"),
		"--kubeconfig", filepath.Join(cfgDir, "kubeconfig"),
		"--config", filepath.Join(cfgDir, "config.yaml"),
		"--cert-dir", filepath.Join(o.RootDir, "pki"),
		"--root-dir", o.RootDir,
		"--nodename", "node-a",
		"--runtime=runc"}
	if !reflect.DeepEqual(argv, want) {
		t.Errorf("exec'd\n%q\nwant\n%q", argv, want)
	}
	if out := o.Out.(*bytes.Buffer).String(); strings.Contains(out, testSecret) {
		t.Errorf("output shows the token's secret:\n%s", out)
	}
}

func TestRunFailuresWriteNothing(t *testing.T) {
	c := newFakeCluster(t)
	for name, edit := range map[string]func(*Options){
		"wrong CA hash":    func(o *Options) { o.Discovery.CACertHashes = []string{"sha256:" + strings.Repeat("0", 64)} },
		"bad token secret": func(o *Options) { o.Discovery.Token = "abcdef.ffffffffffffffff" },
		"unknown token id": func(o *Options) { o.Discovery.Token = "zzzzzz.0123456789abcdef" },
		"malformed token":  func(o *Options) { o.Discovery.Token = "not-a-token" },
		"unreachable":      func(o *Options) { o.Discovery.Endpoint = "127.0.0.1:1" },
	} {
		t.Run(name, func(t *testing.T) {
			var argv []string
			o, cfgDir := joinOptions(t, c, &argv)
			edit(&o)
			if err := Run(context.Background(), o); err == nil {
				t.Fatal("join succeeded")
			}
			if _, err := os.Stat(cfgDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the config dir was made: %v %v", err, listFiles(t, cfgDir))
			}
			if argv != nil {
				t.Errorf("runlet was exec'd: %q", argv)
			}
		})
	}
}

func TestRunRefusesAJoinedBox(t *testing.T) {
	c := newFakeCluster(t)
	for _, which := range []string{"kubeconfig", "client certificate"} {
		var argv []string
		o, _ := joinOptions(t, c, &argv)
		f := o.Paths.Kubeconfig
		if which == "client certificate" {
			f = filepath.Join(o.Paths.CertDir, "kubelet-client-current.pem")
		}
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		err := Run(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), f+" exists: this box has joined a cluster already") {
			t.Errorf("%s: got %v", which, err)
		}
		if n := c.requests.Load(); n != 0 || argv != nil {
			t.Errorf("%s: %d requests, exec'd %q", which, n, argv)
		}
	}
}

func TestRunDryRunWritesNothing(t *testing.T) {
	c := newFakeCluster(t)
	var argv []string
	o, cfgDir := joinOptions(t, c, &argv)
	o.DryRun = true
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfgDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dry run made the config dir: %v", err)
	}
	out := o.Out.(*bytes.Buffer).String()
	for _, w := range []string{"would write " + o.Paths.BootstrapKubeconfig, "token: abcdef.<secret>", "rotateCertificates: true",
		"would exec:\n/usr/local/bin/runlet --bootstrap-kubeconfig"} {
		if !strings.Contains(out, w) {
			t.Errorf("dry run output does not say %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, testSecret) || argv != nil {
		t.Errorf("dry run showed the secret or exec'd %q:\n%s", argv, out)
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, rel)
		}
		return nil
	})
	return got
}
