package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/kubelet"
	"github.com/runlet/runlet/internal/telemetry"
	"github.com/sirupsen/logrus"
	vklog "github.com/virtual-kubelet/virtual-kubelet/log"
	vklogrus "github.com/virtual-kubelet/virtual-kubelet/log/logrus"
)

// run opens what the node runs on (its ports, API clients, tracing, the
// backend) and runs the node until ctx ends.
func run(ctx context.Context, o *options, log *logrus.Entry) error {
	started := time.Now()
	vklog.L = vklogrus.FromLogrus(log)
	ctx = vklog.WithLogger(ctx, vklog.L)
	nodeIP, err := resolveNodeIP(o.NodeIP)
	if err != nil {
		return err
	}
	metricsListener, err := listenEarly(o)
	if err != nil {
		return err
	}
	if metricsListener != nil {
		defer metricsListener.Close()
	}
	clients, err := newClients(ctx, o, log)
	if err != nil {
		return err
	}
	existing, err := checkNodeNameWithin(ctx, clients.kube.CoreV1().Nodes(), o)
	if err != nil {
		return err
	}
	shutdownTracing, err := telemetry.SetupTracing(ctx, o.NodeName, version)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	defer func() { _ = shutdownTracing(context.Background()) }()
	backend, host, err := openBackend(ctx, o, log)
	if err != nil {
		return err
	}
	defer backend.Close()
	d := kubelet.NodeDeps{Client: clients.kube, Events: clients.events, Heartbeat: clients.heartbeat, Backend: backend, Host: host,
		Log: log, Existing: existing, Metrics: metricsListener}
	return runNode(ctx, o, nodeIP, started, d)
}

// runNode makes the node's resources, admission and pod network from the
// flags and runs the node on d.
func runNode(ctx context.Context, o *options, nodeIP string, started time.Time, d kubelet.NodeDeps) error {
	res, err := newNodeResources(o, d.Log)
	if err != nil {
		return err
	}
	if d.Admission, err = res.admitter(o, d.Host); err != nil {
		return err
	}
	if d.Network, err = newPodNetwork(o, d.Host, d.Log); err != nil {
		return fmt.Errorf("pod network: %w", err)
	}
	cfg := kubeletNodeConfig(o, nodeIP, res)
	cfg.Started = started
	return kubelet.RunNode(ctx, cfg, d)
}

// kubeletVersion is the kubelet API level runlet follows, tagged with its own version.
func kubeletVersion() string { return "v1.37.2-runlet-" + strings.TrimPrefix(version, "v") }

// kubeletNodeConfig is the node's config from the flags and the config
// file. It is read after newClients, which may set the client CA file.
func kubeletNodeConfig(o *options, nodeIP string, res nodeResources) kubelet.NodeConfig {
	return kubelet.NodeConfig{
		Config: coreConfig(o, nodeIP, res),
		API: kubelet.APIConfig{
			Address: o.Address, Port: o.KubeletPort, TLSCertFile: o.TLSCertFile, TLSKeyFile: o.TLSKeyFile,
			RotateServerCertificates: o.BootstrapServingCert, CertDir: o.CertDir,
			AuthorizationMode: o.AuthorizationMode, TokenWebhook: o.AuthWebhook, ClientCAFile: o.ClientCAFile,
			Configz: effectiveConfig(o),
		},
		PodSyncWorkers: o.PodSyncWorkers, KubeletVersion: kubeletVersion(), Reserved: res.reserved,
		Taints: o.RegisterWithTaints, Labels: o.NodeLabels, PodCIDR: o.PodCIDR,
		ContainerLogMaxSize: o.ContainerLogMaxSize, ContainerLogMaxFiles: o.ContainerLogMaxFiles,
	}
}

// coreConfig is the core's config from the flags and the config file.
func coreConfig(o *options, nodeIP string, res nodeResources) kubelet.Config {
	return kubelet.Config{
		NodeName: o.NodeName, NodeIP: nodeIP, RootDir: o.RootDir, MaxPods: o.MaxPods,
		PLEGRelistPeriod: o.PLEGRelistPeriod, ImagePullTimeout: o.ImagePullTimeout,
		ClusterDNS: o.ClusterDNS, ClusterDomain: o.ClusterDomain, ResolvConf: o.ResolvConf,
		EvictionThresholds: o.evictionThresholds, EvictionPressureTransitionPeriod: o.EvictionPressureTransitionPeriod,
		Runtime: res.runtimeOptions(o), Allocatable: res.allocatable,
		PodManifestPath: o.PodManifestPath, ManifestURL: o.ManifestURL, ManifestHeader: o.manifestHeader,
		ShutdownGracePeriods: o.shutdownPeriods(),
		OfflineStartAfter:    o.OfflineStartAfter,
	}
}
