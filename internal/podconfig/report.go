package podconfig

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Reasons of the Warning events the file and http sources record on the
// Node. The kubelet only logs these problems; runlet also records them, so
// `kubectl get events` shows why a static pod does not run.
const (
	// ReasonInvalidManifest: a manifest (file or URL body) was ignored.
	ReasonInvalidManifest = "InvalidManifest"
	// ReasonFailedManifestURL: the manifest URL could not be read.
	ReasonFailedManifestURL = "FailedManifestURL"
)

// errTooLarge is a manifest over maxConfigLength, the kubelet's cap.
var errTooLarge = fmt.Errorf("larger than the %d-byte limit of a manifest", maxConfigLength)

// nodeRef is the node as the kubelet refers to it in its events (its UID is
// its name).
func nodeRef(name string) *v1.ObjectReference {
	return &v1.ObjectReference{Kind: "Node", Name: name, UID: types.UID(name)}
}
