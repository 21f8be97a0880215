package podconfig

import (
	"testing"
)

// fuzzSeeds are manifests as users write them, and broken ones.
var fuzzSeeds = []string{
	"apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: c\n    image: busybox\n",
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"img"}]}}`,
	"apiVersion: v1\nkind: PodList\nitems:\n- metadata:\n    name: a\n  spec:\n    containers:\n    - name: c\n      image: i\n",
	"apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n",
	"kind: Pod\nmetadata: {}\n",
	"\x00\xff{[",
	"apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: i\n    volumeMounts:\n    - name: missing\n      mountPath: /x\n",
}

// FuzzParseManifest: whatever a manifest file holds, the file source answers
// with a pod or an error, never a panic; a pod it accepts is named, placed,
// and has a UID.
func FuzzParseManifest(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	src := staticSource{kind: FileSource, nodeName: "node-1", location: "/etc/manifests/x.yaml"}
	f.Fuzz(func(t *testing.T, data []byte) {
		pod, err := parseManifest(data, src)
		if err != nil {
			return
		}
		if pod.Name == "" || pod.Namespace == "" || pod.UID == "" || pod.Spec.NodeName != "node-1" {
			t.Fatalf("accepted pod without its identity: name=%q ns=%q uid=%q node=%q", pod.Name, pod.Namespace, pod.UID, pod.Spec.NodeName)
		}
	})
}

// FuzzParseURLManifests: the same for an HTTP source's body (a Pod or a PodList).
func FuzzParseURLManifests(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	src := staticSource{kind: HTTPSource, nodeName: "node-1", location: "http://127.0.0.1/pods"}
	f.Fuzz(func(t *testing.T, data []byte) {
		pods, err := parseURLManifests(data, src)
		if err != nil {
			return
		}
		for _, pod := range pods {
			if pod.Name == "" || pod.Namespace == "" || pod.UID == "" {
				t.Fatalf("accepted pod without its identity: %q/%q %q", pod.Namespace, pod.Name, pod.UID)
			}
		}
	})
}
