package runtime

import "strconv"

// Labels runlet stamps on every backend object; they are how a restarted
// runlet finds and re-adopts what it created.
const (
	LabelManaged = "io.runlet.managed"
	// LabelOwner names the runlet (its node) that manages the object: several
	// runlets may share one podman, and each must see only its own pods.
	LabelOwner         = "io.runlet.owner"
	LabelPodUID        = "io.runlet.pod.uid"
	LabelPodNamespace  = "io.runlet.pod.namespace"
	LabelPodName       = "io.runlet.pod.name"
	LabelContainerName = "io.runlet.container.name"
	LabelAttempt       = "io.runlet.container.attempt"
	// LabelSpecHash is the hash of the container spec it was created from, so a
	// changed spec (e.g. a new image) is noticed after a restart of runlet.
	LabelSpecHash = "io.runlet.container.hash"
	// LabelInit marks an init container.
	LabelInit = "io.runlet.container.init"
)

// PodLabels are the identity labels of a pod's sandbox and containers, as
// the core stamps them.
func PodLabels(uid, namespace, name string) map[string]string {
	return map[string]string{
		LabelManaged:      "true",
		LabelPodUID:       uid,
		LabelPodNamespace: namespace,
		LabelPodName:      name,
	}
}

// ContainerLabels are a container's identity labels: its pod's (see
// PodLabels) and its own name and attempt.
func ContainerLabels(pod map[string]string, name string, attempt int) map[string]string {
	l := make(map[string]string, len(pod)+2)
	for k, v := range pod {
		l[k] = v
	}
	l[LabelContainerName] = name
	l[LabelAttempt] = strconv.Itoa(attempt)
	return l
}
