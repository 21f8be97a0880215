package node

import (
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-helpers/nodedeclaredfeatures"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures/types"
)

// implemented names, by the feature gates the declared-features framework
// discovers them with, what runlet does of the features a node declares. A
// kubelet declares a feature when its gate is on; runlet declares one when
// it does what the gate stands for, so that the scheduler keeps pods that
// need more off the node and the apiserver refuses pod updates it cannot
// carry out (k8s.io/component-helpers/nodedeclaredfeatures). Left out, with
// what runlet lacks:
//   - ExtendWebSocketsToKubelet: the kubelet port speaks the websocket
//     protocols up to v4, the apiserver's proxy needs v5;
//   - UserNamespacesHostNetworkSupport: user namespaces;
//   - InPlacePodVerticalScalingMemoryBackedVolumes, DRANodeAllocatableResources,
//     DRAOptionalNodeOperations, VolumeBindMountOptions: alpha on v1.37, off
//     on the kubelet too.
var implemented = ndf.FeatureGateMap{
	"InPlacePodLevelResourcesVerticalScaling": true, // pod-level resources are resized in place
	"InPlacePodVerticalScalingInitContainers": true, // running init containers are resized in place
	"RestartAllContainersOnContainerExits":    true, // a restart rule's RestartAllContainers action
}

// DeclaredFeatures is the node's status.declaredFeatures for a node that
// reports kubeletVersion.
func DeclaredFeatures(kubeletVersion string) []string {
	cfg := &ndf.NodeConfiguration{FeatureGates: implemented}
	if v, err := version.ParseSemantic(kubeletVersion); err == nil {
		cfg.Version = v
	}
	return nodedeclaredfeatures.DefaultFramework.DiscoverNodeFeatures(cfg)
}
