package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Fault test 6: bad input. One runlet node gets every case below at once —
// bad static pod manifests in its --pod-manifest-path, a --manifest-url that
// misbehaves, and API pods with bad images, resources, environments, names,
// objects, ports and volumes. Each case must be answered (a pod status
// reason and an event; for the file and http sources a Warning event on the
// Node and a log line naming the file or URL), and at the end the same
// runlet process still serves a plain pod and the good static pods it ran
// from the start.

// badInputTimeout bounds the wait for one answer; a configMap deleted under
// a running pod is answered at the pod's next resync (60-90 s).
const badInputTimeout = 150 * time.Second

func TestBadInput(t *testing.T) {
	ns := framework.Namespace(t)
	manifests := t.TempDir()
	writeManifest(t, manifests, "good.yaml", staticManifest(ns, "good-file"))
	// runlet reads a manifest URL every 20 s, so the http cases run as two
	// chains of responses on two nodes; everything else goes to the first.
	urlB := startStepServer(t, httpChain(ns, "good-url-b", 1))
	rlB := framework.StartRunlet(t, framework.RunletOptions{ManifestURL: urlB.url, NoWaitReady: true})
	urlA := startStepServer(t, httpChain(ns, "good-url-a", 0))
	rl := framework.StartRunlet(t, framework.RunletOptions{PodManifestPath: manifests, ManifestURL: urlA.url})
	rlB.WaitReady(90 * time.Second)
	b := &badInput{ns: ns, node: rl.NodeName, rl: rl, manifests: manifests,
		sharedPort: int32(framework.FreePort(t)), sharedPort2: int32(framework.FreePort(t)), takenPort: listeningPort(t)}
	good := map[*framework.Runlet][]*v1.Pod{
		rl:  {waitMirror(t, ns, "good-file-"+rl.NodeName, rl.NodeName), waitMirror(t, ns, "good-url-a-"+rl.NodeName, rl.NodeName)},
		rlB: {waitMirror(t, ns, "good-url-b-"+rlB.NodeName, rlB.NodeName)},
	}
	pids := map[*framework.Runlet]int{rl: rl.PID(), rlB: rlB.PID()}

	n := len(fileCases(ns)) + len(httpBadSteps(ns, "")) + len(podCases())
	t.Logf("%d bad-input cases", n)
	start := time.Now()
	t.Run("cases", func(t *testing.T) {
		t.Run("file", func(t *testing.T) { t.Parallel(); b.runFileCases(t) })
		t.Run("http", func(t *testing.T) {
			t.Parallel()
			for i, r := range []*framework.Runlet{rl, rlB} {
				srv, pod := []*stepServer{urlA, urlB}[i], good[r][len(good[r])-1].Name
				t.Run(fmt.Sprintf("chain %d", i+1), func(t *testing.T) { t.Parallel(); b.runHTTPSteps(t, r, srv, pod) })
			}
		})
		t.Run("pods", func(t *testing.T) { t.Parallel(); b.runPodCases(t) })
	})
	t.Logf("every case answered after %v", time.Since(start).Round(time.Second))

	// Nothing crashed, nothing good was lost.
	for r, pods := range good {
		if !r.Running() || r.PID() != pids[r] {
			t.Fatalf("runlet %s is not the process that took the bad input (pid %d, running %v)", r.NodeName, pids[r], r.Running())
		}
		if goPanic.MatchString(r.Log()) {
			t.Errorf("runlet %s's log mentions a panic:\n%s", r.NodeName, r.LogTail(60))
		}
		for _, before := range pods {
			after := waitMirror(t, ns, before.Name, r.NodeName)
			if got, want := after.Status.ContainerStatuses[0].ContainerID, before.Status.ContainerStatuses[0].ContainerID; got != want {
				t.Errorf("static pod %s runs container %s, want the same %s as before the bad input", before.Name, got, want)
			}
		}
	}
	plain := framework.PodFor(b.node, ns, "plain-after", framework.Busybox("main", "sleep", "3600"))
	plain.Spec.TerminationGracePeriodSeconds = nil
	framework.CreatePod(t, plain)
	framework.WaitForPodPhase(t, ns, plain.Name, v1.PodRunning, 2*time.Minute)

	// Static pods go before the framework's clean-up, which cannot delete them.
	if err := os.RemoveAll(manifests); err != nil {
		t.Fatal(err)
	}
	urlA.empty()
	urlB.empty()
}

// goPanic is how a Go panic starts in a process's output.
var goPanic = regexp.MustCompile(`(?m)^panic: `)

type badInput struct {
	ns, node  string
	rl        *framework.Runlet
	manifests string
	// host ports: two that pods take first, one a host process holds.
	sharedPort, sharedPort2, takenPort int32
}

// sourceProblem waits for the Warning event on the runlet's node naming
// where the problem is (a file or a URL) with reason and text, and for
// runlet's log line naming it too.
func sourceProblem(t *testing.T, rl *framework.Runlet, reason, where, text, logged string) {
	t.Helper()
	framework.WaitForEvent(t, framework.NodeEventNamespace, "Node", rl.NodeName, badInputTimeout, reason+" "+where+": "+text,
		func(e *v1.Event) bool {
			return e.Type == v1.EventTypeWarning && e.Reason == reason && strings.Contains(e.Message, where) && strings.Contains(e.Message, text)
		})
	for _, line := range strings.Split(rl.Log(), "\n") {
		if strings.Contains(line, logged) && strings.Contains(line, where) {
			return
		}
	}
	t.Errorf("no log line %q naming %s", logged, where)
}

func writeManifest(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// --- the file source ---

type fileCase struct {
	name, file, content string
	want                string // in the event's message
}

func fileCases(ns string) []fileCase {
	good := staticManifest(ns, "dup")
	junk := make([]byte, 4096)
	_, _ = rand.Read(junk)
	return []fileCase{
		{"yaml garbage", "garbage.yaml", "{{{ this: is: not [yaml", "couldn't parse as pod"},
		{"binary junk", "junk.bin", string(junk), "couldn't parse as pod"},
		{"empty file", "empty.yaml", "", "couldn't parse as pod"},
		{"huge file", "huge.yaml", good + "# " + strings.Repeat("x", 11<<20) + "\n", "larger than the 10485760-byte limit"},
		{"wrong kind", "service.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports:\n  - port: 80\n", "not a v1 Pod"},
		{"unknown kind", "unknown.yaml", strings.Replace(good, "kind: Pod", "kind: Pood", 1), `no kind "Pood"`},
		{"no apiVersion or kind", "bare.yaml", "metadata:\n  name: bare\nspec:\n  containers:\n  - name: c\n    image: busybox\n", "Object 'Kind' is missing"},
		{"missing name", "noname.yaml", strings.Replace(good, "  name: dup\n", "", 1), "name is needed"},
		{"invalid name", "badname.yaml", strings.Replace(good, "name: dup", "name: Bad_Name", 1), "metadata.name"},
		{"invalid restartPolicy", "policy.yaml", strings.Replace(good, "spec:\n", "spec:\n  restartPolicy: Sometimes\n", 1), "spec.restartPolicy"},
		{"field of the wrong type", "wrongtype.yaml", strings.Replace(good, "command: [\"sleep\", \"3600\"]", "command: {sleep: 3600}", 1), "cannot unmarshal"},
		{"no containers", "nocontainers.yaml", fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: empty\n  namespace: %s\nspec:\n  containers: []\n", ns), "spec.containers"},
		{"static pod referencing a secret", "secret.yaml", strings.Replace(good, "    command:", "    envFrom:\n    - secretRef:\n        name: s\n    command:", 1), "static pods may not reference secrets"},
		{"duplicate name", "dup-b.yaml", good, "already defined by"},
	}
}

func (b *badInput) runFileCases(t *testing.T) {
	// The first of two files with one pod name keeps it.
	writeManifest(t, b.manifests, "dup-a.yaml", staticManifest(b.ns, "dup"))
	cases := fileCases(b.ns)
	for _, tc := range cases {
		writeManifest(t, b.manifests, tc.file, tc.content)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sourceProblem(t, b.rl, "InvalidManifest", filepath.Join(b.manifests, tc.file), tc.want, "static pod manifest ignored")
		})
	}
	t.Run("the first of the duplicates runs", func(t *testing.T) {
		t.Parallel()
		waitMirror(t, b.ns, "dup-"+b.node, b.node)
	})
}

// --- the http source ---

// httpStep is one response of the manifest URL, and the answer to it.
type httpStep struct {
	name         string
	serve        func(w http.ResponseWriter, r *http.Request)
	reason, want string // event; empty for a good response
	logged       string
}

func serveBody(s string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(s)) }
}

// httpBadSteps are the bad responses; a good one (the manifest given) may
// be part of them, as in a list with one invalid pod.
func httpBadSteps(ns, good string) []httpStep {
	failed, ignored := "failed to read static pods from URL", "static pod manifests from URL ignored"
	return []httpStep{
		{"server error", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) },
			"FailedManifestURL", "500 Internal Server Error", failed},
		{"garbage", serveBody("{{{ <html> not a pod"), "InvalidManifest", "couldn't parse", ignored},
		{"timing out", func(w http.ResponseWriter, r *http.Request) {
			select { // runlet gives up after 10 s, as the kubelet
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
		}, "FailedManifestURL", "Client.Timeout exceeded", failed},
		{"over the size cap", serveBody(good + "# " + strings.Repeat("x", 11<<20) + "\n"),
			"FailedManifestURL", "larger than the 10485760-byte limit", failed},
		{"a list with one invalid pod", serveBody("apiVersion: v1\nkind: PodList\nitems:\n- " + indent(good) + "- " +
			indent(strings.Replace(staticManifest(ns, "other"), "spec:\n", "spec:\n  restartPolicy: Sometimes\n", 1))),
			"InvalidManifest", "spec.restartPolicy", ignored},
		{"wrong kind", serveBody("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"), "InvalidManifest", "ConfigMap", ignored},
	}
}

// httpChain is half of the bad steps (which: 0 or 1) between two good
// responses serving the static pod called name.
func httpChain(ns, name string, which int) []httpStep {
	good := staticManifest(ns, name)
	bad := httpBadSteps(ns, good)
	half := len(bad) / 2
	chain := []httpStep{{name: "good", serve: serveBody(good)}}
	chain = append(chain, bad[which*half:(which+1)*half]...)
	return append(chain, httpStep{name: "good again", serve: serveBody(good)})
}

// stepServer answers the i-th request with step i (the last step repeats),
// so the chain moves on at runlet's own polling pace.
type stepServer struct {
	url   string
	mu    sync.Mutex
	steps []httpStep
	n     int
	blank bool
}

func startStepServer(t *testing.T, steps []httpStep) *stepServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stepServer{url: "http://" + ln.Addr().String() + "/pods", steps: steps}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

func (s *stepServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	step := s.steps[min(s.n, len(s.steps)-1)]
	s.n++
	blank := s.blank
	s.mu.Unlock()
	if blank {
		return // an empty body: no static pods
	}
	step.serve(w, r)
}

func (s *stepServer) empty() { s.mu.Lock(); s.blank = true; s.mu.Unlock() }

// runHTTPSteps waits for the answer to each bad response in turn; the
// last good static pod keeps running meanwhile.
func (b *badInput) runHTTPSteps(t *testing.T, rl *framework.Runlet, s *stepServer, goodPod string) {
	for _, step := range s.steps {
		if step.reason == "" {
			continue
		}
		t.Run(step.name, func(t *testing.T) {
			sourceProblem(t, rl, step.reason, s.url, step.want, step.logged)
			waitMirror(t, b.ns, goodPod, rl.NodeName)
		})
	}
}

// --- API pods ---

// answer is what a pod case must show: a reason in the pod's status (its
// own, a condition's or a container's; "Running" for a pod that runs), and
// an event about the pod with its reason and a piece of its message.
type answer struct {
	// status is a reason the pod's status must show; "a|b": either.
	status      string
	event, text string
	// previousLog, if set, is in the log of the container's last run.
	previousLog string
}

// startFailed is what the kubelet's status says of a process that could
// not start.
const startFailed = "RunContainerError|StartError"

func crashLoop(logged string) answer {
	return answer{status: "CrashLoopBackOff", event: "BackOff", text: "Back-off restarting failed container main", previousLog: logged}
}

type podCase struct {
	name  string
	pod   func(p *v1.Pod, b *badInput) // shapes the plain pod
	setup func(t *testing.T, b *badInput, p *v1.Pod)
	want  answer
	// then, if set, runs once the answer was seen.
	then func(t *testing.T, b *badInput, p *v1.Pod)
}

func (b *badInput) runPodCases(t *testing.T) {
	for i, tc := range podCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := framework.PodFor(b.node, b.ns, fmt.Sprintf("bad-%02d", i), framework.Busybox("main", "sleep", "3600"))
			p.Spec.TerminationGracePeriodSeconds = nil // the default a user gets
			if tc.pod != nil {
				tc.pod(p, b)
			}
			if tc.setup != nil {
				tc.setup(t, b, p)
			}
			created := framework.CreatePod(t, p)
			waitAnswer(t, created, tc.want)
			if tc.then != nil {
				tc.then(t, b, created)
			}
		})
	}
}

// waitAnswer waits until the pod shows the status reason and the event.
func waitAnswer(t *testing.T, p *v1.Pod, want answer) {
	t.Helper()
	framework.Eventually(t, badInputTimeout, fmt.Sprintf("pod %s answered with %q and a %s event (%q)", p.Name, want.status, want.event, want.text), func() (bool, error) {
		cur, err := framework.Get(t).Client.CoreV1().Pods(p.Namespace).Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if want.status != "" && !hasReason(cur, want.status) {
			return false, fmt.Errorf("status reasons %v\n%s", reasons(cur), framework.DescribePod(p.Namespace, p.Name))
		}
		evs, err := framework.Events(p.Namespace, "Pod", p.Name)
		if err != nil {
			return false, err
		}
		found := false
		for _, e := range evs {
			found = found || e.Reason == want.event && strings.Contains(e.Message, want.text)
		}
		if !found {
			return false, fmt.Errorf("no such event yet\n%s", framework.DescribePod(p.Namespace, p.Name))
		}
		if want.previousLog == "" {
			return true, nil
		}
		out, err := framework.KubectlE("logs", "-n", p.Namespace, p.Name, "--previous")
		if err != nil || !strings.Contains(out, want.previousLog) {
			return false, fmt.Errorf("previous log %q (%v), want %q in it", out, err, want.previousLog)
		}
		return true, nil
	})
}

func hasReason(p *v1.Pod, want string) bool {
	for _, have := range reasons(p) {
		for _, r := range strings.Split(want, "|") {
			if have == r {
				return true
			}
		}
	}
	return false
}

// reasons lists what the pod's status says: its phase when Running, its
// reason, its conditions' and its containers' waiting or terminated reasons.
func reasons(p *v1.Pod) []string {
	var out []string
	if p.Status.Phase == v1.PodRunning {
		out = append(out, "Running")
	}
	if p.Status.Reason != "" {
		out = append(out, p.Status.Reason)
	}
	for _, c := range p.Status.Conditions {
		if c.Reason != "" {
			out = append(out, c.Reason)
		}
	}
	all := append(append([]v1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range append(all, p.Status.EphemeralContainerStatuses...) {
		for _, s := range []v1.ContainerState{cs.State, cs.LastTerminationState} {
			switch {
			case s.Waiting != nil:
				out = append(out, s.Waiting.Reason)
			case s.Terminated != nil:
				out = append(out, s.Terminated.Reason)
			}
		}
	}
	return out
}

// Shapers of the plain pod.

func withImage(ref string, policy v1.PullPolicy) func(*v1.Pod, *badInput) {
	return func(p *v1.Pod, _ *badInput) {
		p.Spec.Containers[0].Image, p.Spec.Containers[0].ImagePullPolicy = ref, policy
	}
}

func withResources(req, lim v1.ResourceList) func(*v1.Pod, *badInput) {
	return func(p *v1.Pod, _ *badInput) {
		p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: req, Limits: lim}
	}
}

func quantities(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// bound skips the scheduler, as a pod with spec.nodeName does: runlet's
// admission is then all that checks it.
func bound(shape func(*v1.Pod, *badInput)) func(*v1.Pod, *badInput) {
	return func(p *v1.Pod, b *badInput) {
		p.Spec.NodeName = b.node
		if shape != nil {
			shape(p, b)
		}
	}
}

func withEnv(vars ...v1.EnvVar) func(*v1.Pod, *badInput) {
	return func(p *v1.Pod, _ *badInput) { p.Spec.Containers[0].Env = vars }
}

func withVolume(v v1.VolumeSource, mount v1.VolumeMount) func(*v1.Pod, *badInput) {
	return func(p *v1.Pod, _ *badInput) {
		p.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v}}
		mount.Name = "v"
		if mount.MountPath == "" {
			mount.MountPath = "/v"
		}
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{mount}
	}
}

func withHostPort(port int32, hostNetwork bool) func(*v1.Pod, *badInput) {
	return func(p *v1.Pod, _ *badInput) {
		p.Spec.HostNetwork = hostNetwork
		cp := v1.ContainerPort{ContainerPort: port, HostPort: port, HostIP: "127.0.0.1"}
		if hostNetwork {
			cp.HostIP = ""
		}
		p.Spec.Containers[0].Ports = []v1.ContainerPort{cp}
	}
}

// occupyPort runs a plain pod that holds the host port first.
func occupyPort(port int32) func(*testing.T, *badInput, *v1.Pod) {
	return func(t *testing.T, b *badInput, p *v1.Pod) {
		holder := framework.PodFor(b.node, b.ns, p.Name+"-holder", framework.Busybox("main", "sleep", "3600"))
		withHostPort(port, false)(holder, b)
		framework.CreatePod(t, holder)
		framework.WaitForPodPhase(t, b.ns, holder.Name, v1.PodRunning, badInputTimeout)
	}
}

func createConfigMap(t *testing.T, ns, name string, data map[string]string) {
	t.Helper()
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data}
	if _, err := framework.Get(t).Client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func cmKeyRef(cm, key string) *v1.EnvVarSource {
	return &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: cm}, Key: key}}
}

func secretKeyRef(s, key string) *v1.EnvVarSource {
	return &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: s}, Key: key}}
}

func hostPathType(t v1.HostPathType) *v1.HostPathType { return &t }

// dnsName is a valid DNS name of exactly n characters.
func dnsName(n int) string { return "n" + strings.Repeat("a", n-2) + "z" }

// listeningPort holds a TCP port on 127.0.0.1 for the test's life, as a
// process of the host that has nothing to do with runlet.
func listeningPort(t *testing.T) int32 {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return int32(ln.Addr().(*net.TCPAddr).Port)
}

func podCases() []podCase {
	const bigValue = 200 << 10 // over Linux's 128 KiB limit on one argument or variable
	manyEnv := make([]v1.EnvVar, 2000)
	for i := range manyEnv {
		manyEnv[i] = v1.EnvVar{Name: fmt.Sprintf("VAR_%04d", i), Value: strings.Repeat("v", 32)}
	}
	running := answer{status: "Running", event: "Started"}
	return []podCase{
		// Images.
		{name: "invalid image reference", pod: withImage("not a valid//image::ref", v1.PullIfNotPresent),
			want: answer{status: "InvalidImageName", event: "InspectFailed", text: "invalid reference format"}},
		{name: "uppercase image name", pod: withImage("LOCALHOST/RUNLET/BUSYBOX", v1.PullIfNotPresent),
			want: answer{status: "InvalidImageName", event: "InspectFailed", text: "must be lowercase"}},
		{name: "malformed digest", pod: withImage("localhost/runlet/busybox@sha256:1234", v1.PullIfNotPresent),
			want: answer{status: "InvalidImageName", event: "InspectFailed", text: "invalid"}},
		{name: "image that does not exist", pod: withImage("localhost/runlet/no-such-image:1.0", v1.PullIfNotPresent),
			want: answer{status: "ErrImagePull", event: "Failed", text: "Failed to pull image"}},
		{name: "missing image, never pulled", pod: withImage("localhost/runlet/no-such-image:1.0", v1.PullNever),
			want: answer{status: "ErrImageNeverPull", event: "ErrImageNeverPull", text: "is not present with pull policy of Never"}},
		{name: "missing pull secret", pod: func(p *v1.Pod, b *badInput) {
			withImage("localhost/runlet/no-such-image:2.0", v1.PullIfNotPresent)(p, b)
			p.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "no-such-secret"}}
		}, want: answer{status: "ErrImagePull", event: "FailedToRetrieveImagePullSecret", text: "(no-such-secret)"}},
		{name: "invalid image of an init container", pod: func(p *v1.Pod, _ *badInput) {
			p.Spec.InitContainers = []v1.Container{framework.Busybox("init", "true")}
			p.Spec.InitContainers[0].Image = "not a valid//image::ref"
		}, want: answer{status: "InvalidImageName", event: "InspectFailed", text: "invalid reference format"}},

		// Resources.
		{name: "absurd cpu request", pod: withResources(quantities("cpu", "100k"), nil),
			want: answer{status: "Unschedulable", event: "FailedScheduling", text: "Insufficient cpu"}},
		{name: "absurd memory request", pod: withResources(quantities("memory", "100Pi"), nil),
			want: answer{status: "Unschedulable", event: "FailedScheduling", text: "Insufficient memory"}},
		// The pod's memory limit sizes its token volume's tmpfs, as on the
		// kubelet: 1Ki does not hold the token.
		{name: "memory limit of 1Ki", pod: withResources(nil, quantities("memory", "1Ki")),
			want: answer{status: "ContainerCreating", event: "FailedMount", text: "no space left on device"}},
		// Without it, the pod's cgroup refuses the limit when the sandbox
		// starts, as the kubelet's pod cgroup would.
		{name: "memory limit of 1Ki without a token", pod: func(p *v1.Pod, b *badInput) {
			withResources(nil, quantities("memory", "1Ki"))(p, b)
			p.Spec.AutomountServiceAccountToken = ptrTo(false)
		}, want: answer{status: "ContainerCreating", event: "FailedCreatePodSandBox", text: "cgroup"}},
		{name: "cpu limit of 1m", pod: withResources(nil, quantities("cpu", "1m")), want: running},
		{name: "absurd limits", pod: withResources(quantities("cpu", "10m", "memory", "16Mi"), quantities("cpu", "100k", "memory", "1Ei")), want: running},
		{name: "ephemeral-storage limit of 1 byte", pod: func(p *v1.Pod, b *badInput) {
			withResources(nil, quantities("ephemeral-storage", "1"))(p, b)
			p.Spec.Containers[0].Command = []string{"sh", "-c", "echo over the limit; sleep 3600"}
		}, want: answer{status: "Evicted", event: "Evicted", text: "ephemeral"}},

		// Environment and arguments.
		// The process cannot be executed: the runtime says why in the
		// container's log, and the kubelet restarts it with back-off.
		{name: "env value over 128 KiB", pod: withEnv(v1.EnvVar{Name: "BIG", Value: strings.Repeat("x", bigValue)}),
			want: crashLoop("argument list too long")},
		{name: "argument over 128 KiB", pod: func(p *v1.Pod, _ *badInput) {
			p.Spec.Containers[0].Command = []string{"echo", strings.Repeat("x", bigValue)}
		}, want: crashLoop("argument list too long")},
		{name: "2000 env vars", pod: withEnv(manyEnv...), want: running},
		{name: "env names of any printable characters", pod: withEnv(v1.EnvVar{Name: "my var.with:odd-chars!", Value: "x"}), want: running},

		// Names at their length limits.
		{name: "pod name of 253 characters", pod: func(p *v1.Pod, _ *badInput) { p.Name, p.Labels = dnsName(253), nil }, want: running},
		{name: "container name of 63 characters", pod: func(p *v1.Pod, _ *badInput) { p.Spec.Containers[0].Name = dnsName(63) }, want: running},
		{name: "namespace name of 63 characters", setup: func(t *testing.T, _ *badInput, p *v1.Pod) {
			p.Namespace = longNamespace(t)
		}, want: running},
		{name: "FQDN over 64 characters", pod: func(p *v1.Pod, _ *badInput) {
			p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = dnsName(63), dnsName(63), ptrTo(true)
		}, want: answer{status: "ContainerCreating", event: "FailedCreatePodSandBox", text: "is too long"}},
		{name: "annotations of 200 KiB", pod: func(p *v1.Pod, _ *badInput) {
			p.Annotations = map[string]string{"example.com/big": strings.Repeat("a", 200<<10)}
		}, want: running},

		// ConfigMaps and secrets.
		{name: "env from a missing configMap", pod: withEnv(v1.EnvVar{Name: "A", ValueFrom: cmKeyRef("no-such-cm", "k")}),
			want: answer{status: "CreateContainerConfigError", event: "Failed", text: `configmap "no-such-cm" not found`}},
		{name: "env from a missing secret", pod: withEnv(v1.EnvVar{Name: "A", ValueFrom: secretKeyRef("no-such-secret", "k")}),
			want: answer{status: "CreateContainerConfigError", event: "Failed", text: `secret "no-such-secret" not found`}},
		{name: "env from a missing key", pod: withEnv(v1.EnvVar{Name: "A", ValueFrom: cmKeyRef("cm-nokey", "nokey")}),
			setup: func(t *testing.T, b *badInput, _ *v1.Pod) {
				createConfigMap(t, b.ns, "cm-nokey", map[string]string{"k": "v"})
			},
			want: answer{status: "CreateContainerConfigError", event: "Failed", text: "couldn't find key nokey"}},
		{name: "volume of a missing configMap", pod: withVolume(v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "no-such-cm"}}}, v1.VolumeMount{}),
			want: answer{status: "ContainerCreating", event: "FailedMount", text: `configmap "no-such-cm" not found`}},
		{name: "volume of a missing secret", pod: withVolume(v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "no-such-secret"}}, v1.VolumeMount{}),
			want: answer{status: "ContainerCreating", event: "FailedMount", text: `secret "no-such-secret" not found`}},
		{name: "configMap deleted under a running pod", pod: func(p *v1.Pod, b *badInput) {
			withVolume(v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cm-doomed"}}}, v1.VolumeMount{})(p, b)
			p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "K", ValueFrom: cmKeyRef("cm-doomed", "k")}}
		}, setup: func(t *testing.T, b *badInput, _ *v1.Pod) {
			createConfigMap(t, b.ns, "cm-doomed", map[string]string{"k": "v"})
		},
			want: running, then: configMapDeleted},

		// Host ports.
		{name: "host port another pod holds", pod: bound(func(p *v1.Pod, b *badInput) { withHostPort(b.sharedPort, false)(p, b) }),
			setup: func(t *testing.T, b *badInput, p *v1.Pod) { occupyPort(b.sharedPort)(t, b, p) },
			want:  answer{status: "NodePorts", event: "NodePorts", text: "didn't have free ports"}},
		{name: "host network on a port another pod holds", pod: bound(func(p *v1.Pod, b *badInput) { withHostPort(b.sharedPort2, true)(p, b) }),
			setup: func(t *testing.T, b *badInput, p *v1.Pod) { occupyPort(b.sharedPort2)(t, b, p) },
			want:  answer{status: "NodePorts", event: "NodePorts", text: "didn't have free ports"}},
		{name: "host port a host process holds", pod: func(p *v1.Pod, b *badInput) { withHostPort(b.takenPort, false)(p, b) },
			want: answer{status: "ContainerCreating", event: "FailedCreatePodSandBox", text: "address already in use"}},

		// Volumes.
		{name: "hostPath Directory that does not exist", pod: withVolume(v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{
			Path: "/no/such/dir", Type: hostPathType(v1.HostPathDirectory)}}, v1.VolumeMount{}),
			want: answer{status: "ContainerCreating", event: "FailedMount", text: "hostPath type check failed"}},
		{name: "hostPath Socket that is a file", pod: withVolume(v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{
			Path: "/etc/hostname", Type: hostPathType(v1.HostPathSocket)}}, v1.VolumeMount{}),
			want: answer{status: "ContainerCreating", event: "FailedMount", text: "hostPath type check failed"}},
		{name: "unsupported volume type", pod: withVolume(v1.VolumeSource{NFS: &v1.NFSVolumeSource{Server: "192.0.2.1", Path: "/x"}}, v1.VolumeMount{}),
			want: answer{status: "ContainerCreating", event: "FailedMount", text: "nfs"}},
		{name: "missing claim", pod: bound(withVolume(v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "no-such-claim"}}, v1.VolumeMount{})),
			want: answer{status: "ContainerCreating", event: "FailedMount", text: `"no-such-claim" not found`}},
		{name: "subPathExpr escaping its volume", pod: func(p *v1.Pod, b *badInput) {
			withVolume(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, v1.VolumeMount{SubPathExpr: "$(ESCAPE)"})(p, b)
			p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "ESCAPE", Value: "../../../../etc"}}
		}, want: answer{status: "CreateContainerConfigError", event: "Failed", text: ".."}},

		// Commands and directories. A process that cannot start: podman
		// keeps the container created, and the kubelet shows the failed
		// start (RunContainerError), as on CRI-O; the runc backend ends it
		// with StartError and exit 128, as containerd does.
		{name: "command that does not exist", pod: func(p *v1.Pod, _ *badInput) { p.Spec.Containers[0].Command = []string{"/no/such/binary"} },
			want: answer{status: startFailed, event: "Failed", text: "/no/such/binary"}},
		{name: "command that does not exist, restartPolicy Never", pod: func(p *v1.Pod, _ *badInput) {
			p.Spec.Containers[0].Command, p.Spec.RestartPolicy = []string{"/no/such/binary"}, v1.RestartPolicyNever
		}, want: answer{status: startFailed, event: "Failed", text: "/no/such/binary"}},
		{name: "workingDir that is a file", pod: func(p *v1.Pod, _ *badInput) { p.Spec.Containers[0].WorkingDir = "/etc/passwd" },
			want: answer{status: startFailed, event: "Failed", text: "not a directory"}},

		// Pods the node must refuse.
		{name: "node selector the node does not match", pod: bound(func(p *v1.Pod, _ *badInput) {
			p.Spec.NodeSelector = map[string]string{"example.com/no-such-label": "x"}
		}), want: answer{status: "NodeAffinity", event: "NodeAffinity", text: "didn't match Pod's node affinity/selector"}},
		{name: "os windows", pod: func(p *v1.Pod, _ *badInput) { p.Spec.OS = &v1.PodOS{Name: v1.Windows} },
			want: answer{status: "PodOSNotSupported", event: "PodOSNotSupported", text: "OS field doesn't match"}},
		{name: "os label windows", pod: func(p *v1.Pod, _ *badInput) { p.Labels["kubernetes.io/os"] = "windows" },
			want: answer{status: "PodOSSelectorNodeLabelDoesNotMatch", event: "PodOSSelectorNodeLabelDoesNotMatch", text: "label doesn't match"}},

		// Fields runlet does not implement.
		{name: "ephemeral container added", want: running, then: ephemeralContainerAdded},
	}
}

// configMapDeleted deletes the configMap a running pod mounts and reads
// env from: the pod keeps running, untouched, and its next volume set-up
// says what is missing, as on the kubelet.
func configMapDeleted(t *testing.T, b *badInput, p *v1.Pod) {
	c := framework.Get(t).Client
	if err := c.CoreV1().ConfigMaps(b.ns).Delete(context.Background(), "cm-doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitForEvent(t, b.ns, "Pod", p.Name, badInputTimeout, "FailedMount for the deleted configMap", func(e *v1.Event) bool {
		return e.Reason == "FailedMount" && strings.Contains(e.Message, `configmap "cm-doomed" not found`)
	})
	cur := framework.WaitForPodPhase(t, b.ns, p.Name, v1.PodRunning, time.Minute)
	if cs := cur.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.State.Running == nil {
		t.Errorf("the pod's container was disturbed: restarts %d, state %+v", cs.RestartCount, cs.State)
	}
}

// ephemeralContainerAdded adds a debug container (kubectl debug) to a
// running pod: runlet must run it or say that it does not.
func ephemeralContainerAdded(t *testing.T, b *badInput, p *v1.Pod) {
	c := framework.Get(t).Client
	cur, err := c.CoreV1().Pods(b.ns).Get(context.Background(), p.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dbg := framework.Busybox("debugger", "sleep", "3600")
	cur.Spec.EphemeralContainers = append(cur.Spec.EphemeralContainers, v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon(dbg)})
	if _, err := c.CoreV1().Pods(b.ns).UpdateEphemeralContainers(context.Background(), p.Name, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, badInputTimeout, "the ephemeral container run or reported unsupported", func() (bool, error) {
		evs, err := framework.Events(b.ns, "Pod", p.Name)
		if err != nil {
			return false, err
		}
		for _, e := range evs {
			if e.Reason == "UnsupportedField" && strings.Contains(e.Message, "ephemeralContainers") {
				return true, nil
			}
		}
		pod, err := c.CoreV1().Pods(b.ns).Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, s := range pod.Status.EphemeralContainerStatuses {
			if s.Name == "debugger" && s.State.Running != nil {
				return true, nil
			}
		}
		return false, nil
	})
}

// longNamespace creates a namespace whose name has 63 characters.
func longNamespace(t *testing.T) string {
	c := framework.Get(t).Client
	name := "ns-" + dnsName(60)
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	framework.Eventually(t, time.Minute, "ServiceAccount default in "+name, func() (bool, error) {
		_, err := c.CoreV1().ServiceAccounts(name).Get(context.Background(), "default", metav1.GetOptions{})
		return err == nil, nil
	})
	return name
}

func ptrTo[T any](v T) *T { return &v }
