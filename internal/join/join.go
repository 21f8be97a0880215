package join

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Options are `runlet join`'s.
type Options struct {
	Discovery Discovery
	Paths     Paths
	// RootDir and NodeName are passed on to runlet.
	RootDir, NodeName string
	// Binary is the runlet to run or install (os.Executable by default).
	Binary string
	// ExtraArgs are more runlet flags, after the ones join sets.
	ExtraArgs []string
	// InstallService installs runlet as the box's service instead of
	// exec'ing it.
	InstallService bool
	Service        Service
	// DryRun discovers and checks the cluster, then prints the files and the
	// command (or service) instead of writing and running them.
	DryRun bool
	// Out gets what join did and what to do next.
	Out io.Writer
	// Exec replaces the process; nil is syscall.Exec.
	Exec func(argv0 string, argv, env []string) error
}

// Validate checks the options with no network access.
func (o *Options) Validate() error {
	if err := o.Discovery.Validate(); err != nil {
		return err
	}
	if o.NodeName == "" {
		return errors.New("--nodename is required")
	}
	if o.Binary == "" {
		return errors.New("no runlet binary to run")
	}
	return nil
}

// RunletArgs is the command line of runlet as the joined node: it does the
// TLS bootstrap with the bootstrap kubeconfig and writes Kubeconfig.
func (o *Options) RunletArgs() []string {
	argv := []string{o.Binary,
		"--bootstrap-kubeconfig", o.Paths.BootstrapKubeconfig,
		"--kubeconfig", o.Paths.Kubeconfig,
		"--config", o.Paths.Config,
		"--cert-dir", o.Paths.CertDir,
		"--root-dir", o.RootDir,
		"--nodename", o.NodeName,
	}
	return append(argv, o.ExtraArgs...)
}

// Run joins the cluster: checks, discovery, files, then runlet.
func Run(ctx context.Context, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	// As kubeadm's preflight: a node with a kubeconfig or a client
	// certificate has joined already, and runlet would go on using them
	// rather than the new bootstrap token.
	for _, f := range []string{o.Paths.Kubeconfig, filepath.Join(o.Paths.CertDir, "kubelet-client-current.pem")} {
		if _, err := os.Stat(f); err == nil {
			return fmt.Errorf("%s exists: this box has joined a cluster already; remove %s and the client certificates in %s to join again",
				f, o.Paths.Kubeconfig, o.Paths.CertDir)
		}
	}
	info, err := o.Discovery.Discover(ctx)
	if err != nil {
		return err
	}
	token, _ := ParseToken(o.Discovery.Token) // checked by Validate
	files, err := RenderFiles(o.Paths, info, token)
	if err != nil {
		return err
	}
	argv := o.RunletArgs()
	if o.DryRun {
		return o.printDryRun(files, argv, token)
	}
	if err := WriteFiles(files); err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(o.Out, "wrote %s\n", f.Path)
	}
	if o.InstallService {
		return o.Service.Install(argv, o.Out)
	}
	fmt.Fprintf(o.Out, "running as node %s: %s\n", o.NodeName, ShellQuote(argv))
	exec := o.Exec
	if exec == nil {
		exec = syscall.Exec
	}
	if err := exec(argv[0], argv, os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", argv[0], err)
	}
	return nil
}

// printDryRun shows what join would write and run, the token's secret
// left out.
func (o *Options) printDryRun(files []File, argv []string, token Token) error {
	fmt.Fprintf(o.Out, "dry run: the cluster checks out; nothing written\n")
	for _, f := range files {
		data := bytes.ReplaceAll(f.Data, []byte(token.String()), []byte(token.ID+".<secret>"))
		fmt.Fprintf(o.Out, "\n--- would write %s (mode %04o):\n%s", f.Path, f.Mode, data)
	}
	switch {
	case !o.InstallService:
		fmt.Fprintf(o.Out, "\n--- would exec:\n%s\n", ShellQuote(argv))
	case dirExists(o.Service.SystemdDir):
		fmt.Fprintf(o.Out, "\n--- would write %s and run systemctl daemon-reload, systemctl enable --now:\n%s", o.Service.UnitPath, RenderUnit(argv))
	default:
		fmt.Fprintf(o.Out, "\n--- would write %s and start it:\n%s", o.Service.InitPath,
			RenderInitScript(argv, o.Service.InitPath, o.Service.PidFile, o.Service.LogFile))
	}
	return nil
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
