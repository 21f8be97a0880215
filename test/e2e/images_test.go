package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// TestImagePulls pulls from a registry with htpasswd auth that the test starts on 127.0.0.1 (plain
// HTTP): with a pull secret (dockerconfigjson, legacy dockercfg, or through the pod's
// ServiceAccount) the pod runs and gets Pulling and Pulled events; without one it waits in
// ErrImagePull and ImagePullBackOff with the kubelet's events.
func TestImagePulls(t *testing.T) {
	t.Parallel()
	reg := framework.StartRegistry(t)
	tag := make([]byte, 4)
	_, _ = rand.Read(tag)
	image := reg.Push(t, framework.BusyboxImage, "runlet/private-busybox:"+hex.EncodeToString(tag))
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	node := rl.NodeName
	c := framework.Get(t).Client
	ctx := context.Background()

	auth := base64.StdEncoding.EncodeToString([]byte(reg.User + ":" + reg.Password))
	for _, s := range []*v1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "regcred"}, Type: v1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{v1.DockerConfigJsonKey: []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Host, auth))}},
		{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}, Type: v1.SecretTypeDockercfg,
			Data: map[string][]byte{v1.DockerConfigKey: []byte(fmt.Sprintf(`{"http://%s":{"username":%q,"password":%q}}`, reg.Host, reg.User, reg.Password))}},
		{ObjectMeta: metav1.ObjectMeta{Name: "wrong"}, Type: v1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{v1.DockerConfigJsonKey: []byte(fmt.Sprintf(`{"auths":{%q:{"username":"nobody","password":"nope"}}}`, reg.Host))}},
	} {
		if _, err := c.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "puller"}, ImagePullSecrets: []v1.LocalObjectReference{{Name: "regcred"}}}
	if _, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("WithSecret", func(t *testing.T) { t.Parallel(); testPullRuns(t, node, ns, image, "with-secret", "regcred", "") })
	t.Run("WithLegacyDockercfg", func(t *testing.T) { t.Parallel(); testPullRuns(t, node, ns, image, "with-dockercfg", "legacy", "") })
	t.Run("WithServiceAccount", func(t *testing.T) { t.Parallel(); testPullRuns(t, node, ns, image, "with-sa", "", "puller") })
	t.Run("WrongThenRightSecret", func(t *testing.T) {
		t.Parallel()
		testPullRuns(t, node, ns, image, "wrong-then-right", "wrong,regcred", "")
	})
	t.Run("WithoutSecret", func(t *testing.T) { t.Parallel(); testPullDenied(t, node, ns, image) })
}

func testPullRuns(t *testing.T, node, ns, image, name, secrets, serviceAccount string) {
	ctr := v1.Container{Name: "main", Image: image, ImagePullPolicy: v1.PullAlways, Command: []string{"sleep", "3600"}}
	pod := framework.PodFor(node, ns, name, ctr)
	for _, s := range regexp.MustCompile(`[^,]+`).FindAllString(secrets, -1) {
		pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, v1.LocalObjectReference{Name: s})
	}
	pod.Spec.ServiceAccountName = serviceAccount
	created := framework.CreatePod(t, pod)
	if serviceAccount != "" && (len(created.Spec.ImagePullSecrets) != 1 || created.Spec.ImagePullSecrets[0].Name != "regcred") {
		t.Errorf("the API server did not copy the ServiceAccount's pull secrets into the pod: %+v", created.Spec.ImagePullSecrets)
	}
	framework.WaitForPodPhase(t, ns, name, v1.PodRunning, 120*time.Second)
	pulled := regexp.MustCompile(`^Successfully pulled image "` + regexp.QuoteMeta(image) +
		`" in [0-9.]+(ms|s|µs) \([0-9.]+(ms|s|µs) including waiting\)\. Image size: [1-9][0-9]* bytes\.$`)
	framework.Eventually(t, 30*time.Second, "Pulling and Pulled events", func() (bool, error) {
		evs := podEvents(t, ns, name)
		return hasMessage(evs, "Pulling", `Pulling image "`+image+`"`) && hasMatch(evs, "Pulled", pulled), nil
	})
}

func testPullDenied(t *testing.T, node, ns, image string) {
	ctr := v1.Container{Name: "main", Image: image, ImagePullPolicy: v1.PullAlways, Command: []string{"sleep", "3600"}}
	pod := framework.PodFor(node, ns, "without-secret", ctr)
	seen := watchWaitingReasons(t, ns, pod.Name, "ErrImagePull", "ImagePullBackOff")
	framework.CreatePod(t, pod)
	select {
	case <-seen:
	case <-time.After(120 * time.Second):
		t.Fatalf("did not see both ErrImagePull and ImagePullBackOff\n%s", framework.DescribePod(ns, pod.Name))
	}
	p := framework.WaitForPod(t, ns, pod.Name, 10*time.Second, func(*v1.Pod) bool { return true })
	if p.Status.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
	framework.Eventually(t, 30*time.Second, "the kubelet's pull failure events", func() (bool, error) {
		evs := podEvents(t, ns, pod.Name)
		return hasMatch(evs, "Failed", regexp.MustCompile(`^Failed to pull image "`+regexp.QuoteMeta(image)+`": .*(unauthorized|authentication required)`)) &&
			hasMessage(evs, "Failed", "Error: ErrImagePull") &&
			hasMessage(evs, "BackOff", `Back-off pulling image "`+image+`"`) &&
			hasMessage(evs, "Failed", "Error: ImagePullBackOff"), nil
	})
}

// podEvents lists the kubelet's events about the pod: those of source
// kubelet, the field selector of the upstream e2e suite's event specs.
func podEvents(t *testing.T, ns, pod string) []v1.Event {
	evs, err := framework.Get(t).Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.name": pod, "source": "kubelet"}.AsSelector().String(),
	})
	if err != nil {
		return nil
	}
	return evs.Items
}

func hasMessage(evs []v1.Event, reason, msg string) bool {
	for _, e := range evs {
		if e.Reason == reason && e.Message == msg {
			return true
		}
	}
	return false
}

func hasMatch(evs []v1.Event, reason string, re *regexp.Regexp) bool {
	for _, e := range evs {
		if e.Reason == reason && re.MatchString(e.Message) {
			return true
		}
	}
	return false
}
