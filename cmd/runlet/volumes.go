package main

import (
	"context"
	"time"

	"github.com/runlet/runlet/internal/envvars"
	"github.com/runlet/runlet/internal/objects"
	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/token"
	"github.com/runlet/runlet/internal/trustbundle"
	"github.com/runlet/runlet/internal/volume"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// objectResync is how often pods' volumes are re-read (the pods' resync);
// a watch of an object nobody read for five of those stops until the next
// read, as on the kubelet.
const objectResync = time.Minute

// podObjects are the configMaps and secrets of the node's pods, watched one
// by one (volumes and env both read them), and the services of the
// namespaces pods start containers in (service links).
type podObjects struct {
	configMaps *objects.ConfigMaps
	secrets    *objects.Secrets
	services   *objects.Services
}

// apiObjects serves containers' environments and image pull secrets.
func (p podObjects) apiObjects() *envvars.APIObjects {
	return &envvars.APIObjects{ConfigMaps: p.configMaps, Secrets: p.secrets, ServiceSource: p.services}
}

func newPodObjects(ctx context.Context, client kubernetes.Interface) podObjects {
	return podObjects{
		configMaps: objects.NewConfigMaps(client, objectResync, ctx.Done()),
		secrets:    objects.NewSecrets(client, objectResync, ctx.Done()),
		services:   objects.NewServices(client, ctx.Done()),
	}
}

// newVolumes is the pods' volume manager: its files under --root-dir,
// tokens from the TokenRequest API, trust anchors from ClusterTrustBundles.
func newVolumes(ctx context.Context, o *options, client kubernetes.Interface, objs podObjects, allocatable v1.ResourceList, log *logrus.Entry) *volume.Manager {
	return volume.NewManager(volume.Config{
		Dirs: poddir.New(o.RootDir), ConfigMaps: objs.configMaps, Secrets: objs.secrets,
		Tokens: token.NewManager(client, ctx.Done()), TrustBundles: trustbundle.New(client, ctx.Done()), Client: client,
		ResourceFieldRef: envvars.ResourceFieldValue, NodeAllocatable: allocatable, Log: log.WithField("component", "volume"),
	})
}
