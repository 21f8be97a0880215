package kubelet

import (
	"context"
	"time"

	"github.com/runlet/runlet/internal/checkpoint"
	"github.com/runlet/runlet/internal/envvars"
	"github.com/runlet/runlet/internal/objects"
	"github.com/runlet/runlet/internal/podcertificate"
	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/token"
	"github.com/runlet/runlet/internal/trustbundle"
	"github.com/runlet/runlet/internal/volume"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
)

// objectResync is how often pods' volumes are re-read (the pods' resync);
// a watch of an object nobody read for five of those stops until the next
// read, as on the kubelet.
const objectResync = time.Minute

// podObjects are the configMaps and secrets of the node's pods, watched one
// by one (volumes and env both read them), and the services of the
// namespaces pods start containers in (service links); with a checkpoint,
// read through it.
type podObjects struct {
	configMaps volume.ConfigMaps
	secrets    volume.Secrets
	services   checkpoint.ServiceSource
}

// apiObjects serves containers' environments and image pull secrets.
func (p podObjects) apiObjects() *envvars.APIObjects {
	return &envvars.APIObjects{ConfigMaps: p.configMaps, Secrets: p.secrets, ServiceSource: p.services}
}

func newPodObjects(ctx context.Context, client kubernetes.Interface, cp *checkpoint.Store) podObjects {
	cms := objects.NewConfigMaps(client, objectResync, ctx.Done())
	secrets := objects.NewSecrets(client, objectResync, ctx.Done())
	services := objects.NewServices(client, ctx.Done())
	if cp == nil {
		return podObjects{configMaps: cms, secrets: secrets, services: services}
	}
	return podObjects{
		configMaps: checkpoint.ConfigMaps{ConfigMapSource: cms, Store: cp},
		secrets:    checkpoint.Secrets{SecretSource: secrets, Store: cp},
		services:   checkpoint.Services{ServiceSource: services, Store: cp},
	}
}

// newVolumes is the pods' volume manager: its files under --root-dir,
// tokens from the TokenRequest API, trust anchors from ClusterTrustBundles,
// pod certificates from PodCertificateRequests.
func newVolumes(ctx context.Context, o Config, d Deps, objs podObjects, rec record.EventRecorder) *volume.Manager {
	client, log := d.Client, d.Log
	certs := podcertificate.New(podcertificate.Config{Client: client, NodeName: o.NodeName, Recorder: rec,
		Log: log.WithField("component", "podcertificate")}, ctx.Done())
	var tokens volume.Tokens = token.NewManager(client, ctx.Done())
	var bundles volume.TrustBundles = trustbundle.New(client, ctx.Done())
	if cp := d.Checkpoint; cp != nil {
		tokens = checkpoint.Tokens{TokenSource: tokens, Store: cp}
		bundles = checkpoint.TrustBundles{TrustBundleSource: bundles, Store: cp}
	}
	return volume.NewManager(volume.Config{
		Dirs: poddir.New(o.RootDir), ConfigMaps: objs.configMaps, Secrets: objs.secrets,
		Tokens: tokens, TrustBundles: bundles,
		PodCertificates: certs, Client: client,
		ResourceFieldRef: envvars.ResourceFieldValue, NodeAllocatable: o.Allocatable, Log: log.WithField("component", "volume"),
	})
}
