package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/runlet/runlet/internal/join"
	"github.com/runlet/runlet/internal/logging"
	"github.com/spf13/pflag"
)

// joinUsage is `runlet join --help`.
const joinUsage = `runlet join makes this box a node of a cluster, as kubeadm join makes a kubelet.

It finds the cluster by token discovery: kube-public/cluster-info is read
anonymously, its signature checked with the bootstrap token and its CA with
--discovery-token-ca-cert-hash. It then writes the bootstrap kubeconfig, a
KubeletConfiguration and the cluster CA, and runs runlet (exec), which makes
its client certificate by TLS bootstrap. With --install-service it installs
runlet as the box's service instead (systemd, else /etc/init.d).

Usage:
  runlet join <apiserver host:port or https URL> --token <id>.<secret> \
    --discovery-token-ca-cert-hash sha256:<hex> [flags] [-- runlet flags...]

hack/join-command.sh prints the command for a control plane.

Flags:
%s`

// joinMain is `runlet join`: it only reads the flags; internal/join joins.
func joinMain(args []string) int {
	o, err := parseJoinFlags(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Printf(joinUsage, joinFlags(&join.Options{}, &joinPaths{}).FlagUsages())
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "runlet join:", err)
		return 2
	}
	o.Discovery.Log, _ = logging.New("info", "text", os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := join.Run(ctx, *o); err != nil {
		fmt.Fprintln(os.Stderr, "runlet join:", err)
		return 1
	}
	return 0
}

// joinPaths are the flags whose defaults follow other flags.
type joinPaths struct {
	configOut string
	paths     join.Paths
}

func joinFlags(o *join.Options, p *joinPaths) *pflag.FlagSet {
	host, _ := os.Hostname()
	fs := pflag.NewFlagSet("runlet join", pflag.ContinueOnError)
	fs.SortFlags = false
	d := &o.Discovery
	fs.StringVar(&d.Token, "token", "", "bootstrap token, <id>.<secret> (kubeadm token create)")
	fs.StringSliceVar(&d.CACertHashes, "discovery-token-ca-cert-hash", nil, "sha256:<hex> of the cluster CA's SubjectPublicKeyInfo; any one of several may match")
	fs.BoolVar(&d.UnsafeSkipCAVerification, "discovery-token-unsafe-skip-ca-verification", false, "trust the CA of cluster-info without --discovery-token-ca-cert-hash (its signature with the token is still checked)")
	fs.DurationVar(&d.Timeout, "discovery-timeout", 5*time.Minute, "keep trying this long while the apiserver is unreachable or has not signed cluster-info for the token")
	fs.StringVar(&o.NodeName, "nodename", defaultNodeName(host), "name of the node to register")
	fs.StringVar(&o.RootDir, "root-dir", "/var/lib/runlet", "runlet's --root-dir")
	fs.StringVar(&p.configOut, "config-out", "/etc/runlet", "directory of the files join writes")
	fs.StringVar(&p.paths.BootstrapKubeconfig, "bootstrap-kubeconfig", "", "bootstrap kubeconfig to write (default <config-out>/bootstrap-kubeconfig)")
	fs.StringVar(&p.paths.Kubeconfig, "kubeconfig", "", "kubeconfig runlet writes after its TLS bootstrap (default <config-out>/kubeconfig)")
	fs.StringVar(&p.paths.Config, "config", "", "KubeletConfiguration to write (default <config-out>/config.yaml)")
	fs.StringVar(&p.paths.CAFile, "client-ca-file", "", "cluster CA to write, the configuration's clientCAFile (default <config-out>/pki/ca.crt)")
	fs.StringVar(&p.paths.CertDir, "cert-dir", "", "runlet's --cert-dir, where it keeps its client certificate (default <root-dir>/pki)")
	fs.BoolVar(&o.InstallService, "install-service", false, "install runlet as the box's service, started at boot, instead of running it now")
	fs.StringVar(&o.Service.UnitPath, "unit-file", join.DefaultService().UnitPath, "systemd unit that --install-service writes")
	fs.StringVar(&o.Service.InitPath, "init-script", join.DefaultService().InitPath, "init script that --install-service writes where systemd does not run the box")
	fs.StringVar(&o.Binary, "runlet-binary", "", "runlet binary to run or install (default this one)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "check the cluster and the token, then print the files and the command instead of writing and running them")
	fs.SetOutput(io.Discard)
	return fs
}

func parseJoinFlags(args []string) (*join.Options, error) {
	o := &join.Options{Service: join.DefaultService()}
	var p joinPaths
	fs := joinFlags(o, &p)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	pos, extra := fs.Args(), []string(nil)
	if at := fs.ArgsLenAtDash(); at >= 0 {
		pos, extra = fs.Args()[:at], fs.Args()[at:]
	}
	if len(pos) != 1 {
		return nil, fmt.Errorf("want one apiserver endpoint (host:port or https URL), got %d arguments; runlet join --help", len(pos))
	}
	o.Discovery.Endpoint, o.ExtraArgs = pos[0], extra

	def := join.DefaultPaths(p.configOut, o.RootDir)
	o.Paths = p.paths
	for _, f := range []struct {
		v *string
		d string
	}{
		{&o.Paths.BootstrapKubeconfig, def.BootstrapKubeconfig}, {&o.Paths.Kubeconfig, def.Kubeconfig},
		{&o.Paths.Config, def.Config}, {&o.Paths.CAFile, def.CAFile}, {&o.Paths.CertDir, def.CertDir},
	} {
		if *f.v == "" {
			*f.v = f.d
		}
		if abs, err := filepath.Abs(*f.v); err == nil {
			*f.v = abs // runlet may run from another directory, as a service
		}
	}
	if abs, err := filepath.Abs(o.RootDir); err == nil {
		o.RootDir = abs
	}
	if o.Binary == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding runlet's own binary (name it with --runlet-binary): %w", err)
		}
		o.Binary = self
		if o.InstallService && strings.HasPrefix(self, os.TempDir()+string(filepath.Separator)) {
			return nil, fmt.Errorf("--install-service: this runlet is %s, a temporary file (go run?); install runlet or name it with --runlet-binary", self)
		}
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o, nil
}
