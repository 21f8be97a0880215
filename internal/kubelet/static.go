package kubelet

import (
	"context"

	"github.com/runlet/runlet/internal/apisource"
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/vknode"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// startSources registers the pod config's sources: the api source first,
// as podconfig has seen all sources only once it has heard from this one
// too; then starts the static ones.
func (k *Kubelet) startSources(ctx context.Context, o Config, d Deps) error {
	src, err := apisource.New(apiSourceConfig(o, d, k.config.Channel(podconfig.APISource), k.status))
	if err != nil {
		return err
	}
	k.source = src
	return startStaticSources(ctx, o, k.config, d.Events, d.Log)
}

// startStaticSources registers and starts the file and http sources whose
// flags are set. Call it after registering the api source: sources-ready
// then waits for every registered source, as on the kubelet.
func startStaticSources(ctx context.Context, o Config, cfg *podconfig.Config, events corev1client.EventsGetter, log *logrus.Entry) error {
	if o.ManifestURL == "" && o.PodManifestPath == "" {
		return nil
	}
	rec := newSourceRecorder(ctx, events, o.NodeName)
	if o.ManifestURL != "" {
		go podconfig.RunHTTPSource(ctx, podconfig.HTTPSourceConfig{
			URL: o.ManifestURL, Header: o.ManifestHeader, NodeName: o.NodeName, Recorder: rec,
			Updates: cfg.Channel(podconfig.HTTPSource), Log: log.WithField("source", podconfig.HTTPSource),
		})
	}
	if o.PodManifestPath != "" {
		go podconfig.RunFileSource(ctx, podconfig.FileSourceConfig{
			Path: o.PodManifestPath, NodeName: o.NodeName, Recorder: rec,
			Updates: cfg.Channel(podconfig.FileSource), Log: log.WithField("source", podconfig.FileSource),
		})
	}
	return nil
}

// newSourceRecorder records the sources' problems on the Node. It has its
// own broadcaster because client-go's default correlator lets 25 Warning
// events about one object through and then one per 5 minutes, and merges
// more than 10 with one reason into one: a directory of bad manifests would
// then show only some of them. The sources report each problem once, so
// they need no spam filter of their own.
func newSourceRecorder(ctx context.Context, events corev1client.EventsGetter, nodeName string) record.EventRecorder {
	eb := record.NewBroadcaster(record.WithContext(ctx), record.WithCorrelatorOptions(record.CorrelatorOptions{
		BurstSize: 1000, QPS: 1, MaxEvents: 1000,
	}))
	eb.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: events.Events(v1.NamespaceAll)}) // ends with ctx
	return eb.NewRecorder(scheme.Scheme, v1.EventSource{Component: vknode.EventComponent, Host: nodeName})
}
