package podconfig

import (
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/dump"
)

// maxConfigLength bounds a manifest (file or URL body), as the kubelet does.
const maxConfigLength = 10 * 1 << 20

// staticSource says where a static pod came from; it feeds the UID hash so
// the same manifest under two paths (or URLs) gives two pods.
type staticSource struct {
	kind     string // FileSource or HTTPSource
	location string // path or URL
	nodeName string
}

// errNotAPod means the data decoded but is not a single v1 Pod: the http
// source then tries a PodList.
var errNotAPod = errors.New("not a v1 Pod")

// decodePod parses YAML or JSON into a v1 Pod.
func decodePod(data []byte) (*v1.Pod, error) {
	obj, err := decode(data)
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("%w: got %T", errNotAPod, obj)
	}
	return pod, nil
}

// decodePodList parses YAML or JSON into a v1 PodList.
func decodePodList(data []byte) (*v1.PodList, error) {
	obj, err := decode(data)
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*v1.PodList)
	if !ok {
		return nil, fmt.Errorf("not a v1 PodList: got %T", obj)
	}
	return list, nil
}

func decode(data []byte) (runtime.Object, error) {
	js, err := utilyaml.ToJSON(data)
	if err != nil {
		return nil, err
	}
	// The deserializer requires apiVersion and kind, like the kubelet's
	// universal decoder; it does no defaulting (setPodDefaults does).
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(js, nil, nil)
	return obj, err
}

// prepareStaticPod defaults, names and validates a decoded manifest. The
// order follows the kubelet: API defaults, then the UID hash over the
// defaulted pod, then the static pod fields, then validation.
func prepareStaticPod(pod *v1.Pod, src staticSource) error {
	if pod.Name == "" {
		return errors.New("invalid pod: name is needed for the pod")
	}
	setPodDefaults(pod)
	applyStaticDefaults(pod, src)
	return validateStaticPod(pod)
}

// applyStaticDefaults is the kubelet's applyDefaults (config/common.go).
func applyStaticDefaults(pod *v1.Pod, src staticSource) {
	if pod.UID == "" {
		pod.UID = staticPodUID(pod, src)
	}
	pod.Name = fmt.Sprintf("%s-%s", pod.Name, strings.ToLower(src.nodeName))
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.Spec.NodeName = src.nodeName
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[ConfigHashAnnotation] = string(pod.UID)
	if src.kind == FileSource {
		// Static pods must survive the node's own NoExecute taints
		// (e.g. not-ready), or the node could never become ready.
		addToleration(pod, v1.Toleration{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute})
	}
	pod.Status.Phase = v1.PodPending
}

// staticPodUID hashes the defaulted pod with where it came from, as the
// kubelet does (fnv-128a over a deterministic dump). Unlike the kubelet, the
// node name is hashed for URL sources too: several runlet nodes may share
// one podman, and backend objects are keyed by pod UID.
func staticPodUID(pod *v1.Pod, src staticSource) types.UID {
	h := fnv.New128a()
	fmt.Fprintf(h, "%v", dump.ForHash(pod))
	fmt.Fprintf(h, "host:%s", src.nodeName)
	if src.kind == FileSource {
		fmt.Fprintf(h, "file:%s", src.location)
	} else {
		fmt.Fprintf(h, "url:%s", src.location)
	}
	return types.UID(hex.EncodeToString(h.Sum(nil)))
}

func addToleration(pod *v1.Pod, t v1.Toleration) {
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].MatchToleration(&t) {
			return
		}
	}
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, t)
}
