package main

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/runlet/runlet/internal/logging"
	nodeinfo "github.com/runlet/runlet/internal/node"
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/sysctl"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/util/validation"
)

// validateValues checks every value runlet would otherwise first meet after
// it started (or send on to the apiserver, whose validation message would
// name a field, not the flag), so that a bad one is refused before anything
// starts, with the flag's name.
func (o *options) validateValues() error {
	for _, check := range []func() error{o.validateListeners, o.validateLimits, o.validateFiles, o.validateLists} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (o *options) validateListeners() error {
	if net.ParseIP(o.Address) == nil {
		return fmt.Errorf("--address %q is not an IP address", o.Address)
	}
	if o.NodeIP != "" && net.ParseIP(o.NodeIP) == nil {
		return fmt.Errorf("--node-ip %q is not an IP address", o.NodeIP)
	}
	if o.MetricsAddr != "" {
		host, port, err := net.SplitHostPort(o.MetricsAddr)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 || (host != "" && net.ParseIP(host) == nil) {
			return fmt.Errorf("--metrics-addr %q is not <IP>:<port> (127.0.0.1:10301; :10301 for every interface; empty: off)", o.MetricsAddr)
		}
	}
	if _, err := logrus.ParseLevel(o.LogLevel); err != nil {
		return fmt.Errorf("--log-level %q is not one of debug, info, warn, error", o.LogLevel)
	}
	if !slices.Contains(logging.Formats, o.LoggingFormat) {
		return fmt.Errorf("--logging-format %q is not one of %s", o.LoggingFormat, strings.Join(logging.Formats, ", "))
	}
	return nil
}

// validateLimits applies the kubelet's rules to the numbers.
func (o *options) validateLimits() error {
	switch {
	case o.MaxPods < 0:
		return fmt.Errorf("--max-pods must not be negative, not %d", o.MaxPods)
	case o.PLEGRelistPeriod <= 0:
		return fmt.Errorf("--pleg-relist-period must be positive, not %s", o.PLEGRelistPeriod)
	case o.KubeAPIQPS < 0:
		return fmt.Errorf("--kube-api-qps must not be negative, not %g", o.KubeAPIQPS)
	case o.KubeAPIBurst < 0:
		return fmt.Errorf("--kube-api-burst must not be negative, not %d", o.KubeAPIBurst)
	case o.EventQPS < 0:
		return fmt.Errorf("--event-qps must not be negative, not %d", o.EventQPS)
	case o.EventBurst < 0 || (o.EventBurst == 0 && o.EventQPS > 0):
		return fmt.Errorf("--event-burst must be positive with a --event-qps limit, not %d", o.EventBurst)
	case o.PodSyncWorkers < 1:
		return fmt.Errorf("--pod-sync-workers must be at least 1, not %d", o.PodSyncWorkers)
	case o.ImagePullTimeout <= 0:
		return fmt.Errorf("--image-pull-timeout must be positive, not %s", o.ImagePullTimeout)
	case o.OfflineStartAfter < 0:
		return fmt.Errorf("--offline-start-after must not be negative (0 turns the checkpoint off), not %s", o.OfflineStartAfter)
	case o.PodMaxPids == 0 || o.PodMaxPids < -1:
		return fmt.Errorf("--pod-max-pids must be positive, or -1 for no limit, not %d", o.PodMaxPids)
	}
	o.reserved = nil
	for _, f := range []struct {
		name string
		m    map[string]string
	}{{"--system-reserved", o.SystemReserved}, {"--kube-reserved", o.KubeReserved}} {
		l, err := nodeinfo.ParseReservation(f.m)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		o.reserved = append(o.reserved, namedReservation{flag: f.name, list: l})
	}
	return nil
}

func (o *options) validateFiles() error {
	if o.RootDir == "" {
		return fmt.Errorf("--root-dir must not be empty")
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return fmt.Errorf("--tls-cert-file and --tls-private-key-file go together: set both or neither")
	}
	if o.ManifestURL == "" && len(o.ManifestURLHeader) > 0 {
		return fmt.Errorf("--manifest-url-header needs --manifest-url")
	}
	h, err := podconfig.ParseURLHeaders(o.ManifestURLHeader)
	if err != nil {
		return fmt.Errorf("--manifest-url-header: %w", err)
	}
	o.manifestHeader = h
	return nil
}

func (o *options) validateLists() error {
	if o.ClusterDomain != "" {
		if errs := validation.IsDNS1123Subdomain(o.ClusterDomain); len(errs) > 0 {
			return fmt.Errorf("--cluster-domain %q is not a DNS domain: %s", o.ClusterDomain, strings.Join(errs, "; "))
		}
	}
	// The kernel's own safe list is added at start; the patterns are checked here.
	if _, err := sysctl.NewAllowlist("", o.AllowedUnsafeSysctls); err != nil {
		return fmt.Errorf("--allowed-unsafe-sysctls: %w", err)
	}
	return nil
}
