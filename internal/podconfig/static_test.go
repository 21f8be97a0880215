package podconfig

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

const nginxManifest = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: nginx
    image: nginx:1.27
`

func mustParse(t *testing.T, data, node, path string) *v1.Pod {
	t.Helper()
	pod, err := parseManifest([]byte(data), staticSource{kind: FileSource, location: path, nodeName: node})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return pod
}

func TestStaticDefaults(t *testing.T) {
	pod := mustParse(t, nginxManifest, "Edge-1", "/etc/runlet/manifests/web.yaml")
	if pod.Name != "web-edge-1" {
		t.Errorf("name = %q, want web-edge-1 (suffixed with the lower-cased node name)", pod.Name)
	}
	if pod.Namespace != "default" {
		t.Errorf("namespace = %q, want default", pod.Namespace)
	}
	if pod.Spec.NodeName != "Edge-1" {
		t.Errorf("nodeName = %q", pod.Spec.NodeName)
	}
	if pod.UID == "" || pod.Annotations[ConfigHashAnnotation] != string(pod.UID) {
		t.Errorf("uid %q, config.hash %q: want equal and set", pod.UID, pod.Annotations[ConfigHashAnnotation])
	}
	want := v1.Toleration{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}
	if len(pod.Spec.Tolerations) != 1 || pod.Spec.Tolerations[0] != want {
		t.Errorf("tolerations = %+v, want [%+v]", pod.Spec.Tolerations, want)
	}
	if pod.Spec.RestartPolicy != v1.RestartPolicyAlways || pod.Spec.Containers[0].ImagePullPolicy != v1.PullIfNotPresent {
		t.Errorf("API defaults missing: restartPolicy %q, pullPolicy %q", pod.Spec.RestartPolicy, pod.Spec.Containers[0].ImagePullPolicy)
	}
	if pod.Status.Phase != v1.PodPending {
		t.Errorf("phase = %q, want Pending", pod.Status.Phase)
	}
}

func TestStaticUIDStable(t *testing.T) {
	const path = "/m/web.yaml"
	a := mustParse(t, nginxManifest, "n1", path)
	b := mustParse(t, nginxManifest, "n1", path)
	if a.UID != b.UID {
		t.Fatalf("same manifest, node and path gave UIDs %q and %q", a.UID, b.UID)
	}
	for what, other := range map[string]*v1.Pod{
		"another node":    mustParse(t, nginxManifest, "n2", path),
		"another path":    mustParse(t, nginxManifest, "n1", "/m/other.yaml"),
		"another content": mustParse(t, strings.Replace(nginxManifest, "1.27", "1.28", 1), "n1", path),
	} {
		if other.UID == a.UID {
			t.Errorf("%s kept UID %q", what, a.UID)
		}
	}
	url, err := parseURLManifests([]byte(nginxManifest), staticSource{kind: HTTPSource, location: path, nodeName: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if url[0].UID == a.UID || len(url[0].Spec.Tolerations) != 0 {
		t.Errorf("http source: UID %q (file gave %q), tolerations %v: want a distinct UID and none added", url[0].UID, a.UID, url[0].Spec.Tolerations)
	}
}

func TestStaticValidation(t *testing.T) {
	cases := map[string]struct{ from, to, want string }{
		"no name":            {"name: web\n", "labels: {}\n", "name is needed"},
		"bad name":           {"name: web", "name: Web_1", "metadata.name"},
		"bad namespace":      {"name: web", "name: web\n  namespace: No_Such", "metadata.namespace"},
		"no image":           {"    image: nginx:1.27\n", "", "image"},
		"no containers":      {"  containers:\n  - name: nginx\n    image: nginx:1.27\n", "  containers: []\n", "at least one container"},
		"duplicate names":    {"    image: nginx:1.27\n", "    image: nginx:1.27\n  - name: nginx\n    image: busybox\n", "Duplicate value"},
		"configmap ref":      {"    image: nginx:1.27\n", "    image: nginx:1.27\n    envFrom: [{configMapRef: {name: x}}]\n", "may not reference configmaps"},
		"service account":    {"  containers:", "  serviceAccountName: x\n  containers:", "may not reference serviceaccounts"},
		"undefined mount":    {"    image: nginx:1.27\n", "    image: nginx:1.27\n    volumeMounts: [{name: data, mountPath: /d}]\n", "volumeMounts"},
		"not a pod":          {"kind: Pod", "kind: Service", "couldn't parse"},
		"bad restart policy": {"  containers:", "  restartPolicy: Sometimes\n  containers:", "restartPolicy"},
	}
	for name, c := range cases {
		data := strings.Replace(nginxManifest, c.from, c.to, 1)
		if data == nginxManifest {
			t.Fatalf("%s: the test case does not change the manifest", name)
		}
		_, err := parseManifest([]byte(data), staticSource{kind: FileSource, location: "/m/x", nodeName: "n1"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", name, err, c.want)
		}
	}
}

func TestParseURLHeaders(t *testing.T) {
	h, err := ParseURLHeaders([]string{"a:hello,b:again", "B: beautiful", "X-Token:k:v"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Values("B"); len(got) != 2 || got[0] != "again" || got[1] != "beautiful" {
		t.Errorf("B = %v", got)
	}
	if h.Get("A") != "hello" || h.Get("X-Token") != "k:v" {
		t.Errorf("headers = %v", h)
	}
	if _, err := ParseURLHeaders([]string{"novalue"}); err == nil {
		t.Error("a pair without ':' was accepted")
	}
}
