package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/instrumented"
	"github.com/runlet/runlet/internal/runtime/podman"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/internal/runtime/runc"
	"github.com/sirupsen/logrus"
)

// backend is the container backend runlet runs pods on.
type backend interface {
	runtime.Runtime
	Close() error
}

// openBackend opens the backend --runtime names, every call to it measured
// (runlet_runtime_operations_*, a span per call) whichever it is, and reads
// what it says of its host.
func openBackend(ctx context.Context, o *options, log *logrus.Entry) (backend, runtime.HostInfo, error) {
	raw, err := openRawBackend(ctx, o, log)
	if err != nil {
		return nil, runtime.HostInfo{}, err
	}
	b := struct {
		runtime.Runtime
		io.Closer
	}{instrumented.New(raw), raw}
	host, err := b.Info(ctx)
	if err != nil {
		_ = b.Close()
		return nil, runtime.HostInfo{}, fmt.Errorf("%s info: %w", o.Runtime, err)
	}
	log.WithFields(logrus.Fields{"runtime": host.RuntimeName + " " + host.RuntimeVersion, "oci": host.OCIRuntime,
		"cgroup": host.CgroupVersion}).Info("container backend ready")
	for _, l := range b.Capabilities().Limitations {
		log.WithField("backend", o.Runtime).Warn(l)
	}
	return b, host, nil
}

// openRawBackend opens the backend itself.
func openRawBackend(ctx context.Context, o *options, log *logrus.Entry) (backend, error) {
	if o.Runtime == runtimeRunc {
		b, err := runc.Open(ctx, runc.Options{Root: runcRoot(o), Owner: o.NodeName,
			ImageGCHigh: o.ImageGCHighThreshold, ImageGCLow: o.ImageGCLowThreshold,
			Logf: log.WithField("component", "runc").Infof})
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	b, err := podman.New(ctx, podman.Options{
		Socket: o.PodmanSocket, Owner: o.NodeName,
		SSH:  libpod.SSHConfig{IdentityFile: o.PodmanIdentity, KnownHostsFile: o.PodmanKnownHosts},
		Logf: log.WithField("component", "podman").Infof,
	})
	if err != nil {
		return nil, fmt.Errorf("podman backend: %w", err)
	}
	return b, nil
}

// runcRoot is where the runc backend keeps its images and containers.
func runcRoot(o *options) string { return filepath.Join(o.RootDir, "runc") }
