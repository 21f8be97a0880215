// Package podconfig merges the pods of every source (api, file, http) into one
// ordered stream of PodUpdates, as the kubelet's pkg/kubelet/config does.
package podconfig

import (
	v1 "k8s.io/api/core/v1"
)

// Op is the kind of change a PodUpdate carries.
type Op int

// The ops, in the kubelet's meaning.
const (
	// ADD: pods new to the source.
	ADD Op = iota
	// UPDATE: spec, labels or non-local annotations changed.
	UPDATE
	// DELETE: the pod got a deletion timestamp (graceful delete).
	DELETE
	// REMOVE: the pod vanished from the source.
	REMOVE
	// RECONCILE: only the status differs from what the source holds.
	RECONCILE
)

func (o Op) String() string {
	return [...]string{"ADD", "UPDATE", "DELETE", "REMOVE", "RECONCILE"}[o]
}

// Source names.
const (
	APISource  = "api"
	FileSource = "file"
	HTTPSource = "http"
)

// Annotations the kubelet sets on the pods it manages.
const (
	ConfigSourceAnnotation    = "kubernetes.io/config.source"
	ConfigMirrorAnnotation    = "kubernetes.io/config.mirror"
	ConfigFirstSeenAnnotation = "kubernetes.io/config.seen"
	ConfigHashAnnotation      = "kubernetes.io/config.hash"
)

// PodUpdate is one change from one source.
type PodUpdate struct {
	Op     Op
	Pods   []*v1.Pod
	Source string
}

// IsStatic reports whether the pod comes from a file or http source.
func IsStatic(pod *v1.Pod) bool {
	src := pod.Annotations[ConfigSourceAnnotation]
	return src != "" && src != APISource
}

// IsMirror reports whether the pod is the apiserver's mirror of a static pod.
func IsMirror(pod *v1.Pod) bool {
	_, ok := pod.Annotations[ConfigMirrorAnnotation]
	return ok
}
