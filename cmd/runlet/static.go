package main

import (
	"context"
	"fmt"

	"github.com/runlet/runlet/internal/podconfig"
	"github.com/sirupsen/logrus"
	"k8s.io/client-go/tools/record"
)

// startStaticSources registers and starts the file and http sources whose
// flags are set. Call it after registering the api source: sources-ready
// then waits for every registered source, as on the kubelet.
func startStaticSources(ctx context.Context, o *options, cfg *podconfig.Config, rec record.EventRecorder, log *logrus.Entry) error {
	if o.ManifestURL != "" {
		header, err := podconfig.ParseURLHeaders(o.ManifestURLHeader)
		if err != nil {
			return fmt.Errorf("--manifest-url-header: %w", err)
		}
		go podconfig.RunHTTPSource(ctx, podconfig.HTTPSourceConfig{
			URL: o.ManifestURL, Header: header, NodeName: o.NodeName,
			Updates: cfg.Channel(podconfig.HTTPSource), Log: log.WithField("source", podconfig.HTTPSource),
		})
	} else if len(o.ManifestURLHeader) > 0 {
		return fmt.Errorf("--manifest-url-header needs --manifest-url")
	}
	if o.PodManifestPath != "" {
		go podconfig.RunFileSource(ctx, podconfig.FileSourceConfig{
			Path: o.PodManifestPath, NodeName: o.NodeName, Recorder: rec,
			Updates: cfg.Channel(podconfig.FileSource), Log: log.WithField("source", podconfig.FileSource),
		})
	}
	return nil
}
