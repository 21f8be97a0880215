package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/runlet/runlet/internal/logging"
	"github.com/runlet/runlet/internal/uninstall"
	"github.com/sirupsen/logrus"
	"github.com/spf13/pflag"
)

// uninstallMain is `runlet uninstall`, the chart's pre-delete hook: see
// internal/uninstall.
func uninstallMain(args []string) int {
	var (
		o          uninstall.Options
		kubeconfig string
		timeout    time.Duration
		logLevel   string
	)
	fs := pflag.NewFlagSet("runlet uninstall", pflag.ContinueOnError)
	fs.StringVar(&kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file; empty means in-cluster config")
	fs.StringVar(&o.Namespace, "namespace", "", "namespace of runlet's workload")
	fs.StringVar(&o.Workload, "workload", "", "runlet's workload: deployment/<name> or daemonset/<name>")
	fs.StringVar(&o.NodeSelector, "node-selector", "", "label selector of the nodes to delete (the release's)")
	fs.StringVar(&o.Pods, "pods", uninstall.PodsStop, "pods on those nodes: stop (drain them first) or keep (their containers keep running)")
	fs.DurationVar(&timeout, "timeout", 5*time.Minute, "give up after this long")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Printf("runlet uninstall deletes a release's nodes (the chart's pre-delete hook).\n\nUsage:\n  runlet uninstall [flags]\n\nFlags:\n%s", fs.FlagUsages())
			return 0
		}
		fmt.Fprintln(os.Stderr, "runlet uninstall:", err)
		return 2
	}
	if _, err := logrus.ParseLevel(logLevel); err != nil {
		fmt.Fprintf(os.Stderr, "runlet uninstall: --log-level %q is not one of debug, info, warn, error\n", logLevel)
		return 2
	}
	if o.Namespace == "" {
		fmt.Fprintln(os.Stderr, "runlet uninstall: --namespace is required")
		return 2
	}
	log, _ := logging.New(logLevel, "text", os.Stderr) // the level is checked above
	o.Log = log
	client, err := newClient(&options{Kubeconfig: kubeconfig, KubeAPIQPS: 20, KubeAPIBurst: 40})
	if err != nil {
		log.WithError(err).Error("uninstall failed")
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := uninstall.Run(ctx, client, o); err != nil {
		log.WithError(err).Error("uninstall failed")
		return 1
	}
	log.Info("uninstalled: runlet stopped and its nodes deleted")
	return 0
}
