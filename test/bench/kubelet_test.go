package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/runlet/runlet/test/e2e/framework"
)

// kubeletNode is a real kubelet on containerd, joined to the bench's
// control plane by hack/kubelet-node.sh: its processes, its kubelet
// endpoint, and containerd's CRI for what the API does not show.
type kubeletNode struct {
	name, dir string
	sock      string // containerd's
	url       string // the kubelet's endpoint, https://<node IP>:<port>
	cri       cri.RuntimeServiceClient
	conn      *grpc.ClientConn
	http      *http.Client // the cluster admin's client certificate
}

// startKubelet brings the node up (containerd, the test images, the kubelet, which bootstraps its
// identity system:node:<name> as runlet does) and stops it at the test's end, or when the test
// binary dies.
func startKubelet(t *testing.T, cfg config) *kubeletNode {
	c := framework.Get(t)
	k := &kubeletNode{name: "kubelet-" + runID(), dir: t.TempDir()}
	env := []string{"CP_DIR=" + c.CPDir, "NODE_NAME=" + k.name, "KUBELET_DIR=" + k.dir,
		"MAX_PODS=" + strconv.Itoa(cfg.maxPods()), "WATCH_PID=" + strconv.Itoa(os.Getpid()),
		// runlet runs no portmap for a pod that publishes no port, and the bench's publish none
		"PORTMAP=0"}
	t.Cleanup(func() {
		if k.conn != nil {
			_ = k.conn.Close()
		}
		if err := k.script(c, env, "down"); err != nil {
			t.Errorf("hack/kubelet-node.sh down: %v", err)
		}
	})
	if err := k.script(c, env, "up"); err != nil {
		t.Fatalf("hack/kubelet-node.sh up: %v (logs in %s/logs)", err, k.dir)
	}
	vars := readEnvFile(t, filepath.Join(k.dir, "env"))
	k.sock, k.url = vars["CONTAINERD_SOCK"], vars["KUBELET_URL"]
	var err error
	if k.conn, err = grpc.NewClient("unix://"+k.sock, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		t.Fatal(err)
	}
	k.cri = cri.NewRuntimeServiceClient(k.conn)
	// The kubelet serves a self-signed certificate, as a kubeadm node does
	// by default, and the apiserver does not verify it either: the bench
	// reads its metrics the same way, with the cluster admin's certificate.
	tls := rest.CopyConfig(c.Config)
	tls.Insecure, tls.CAFile, tls.CAData = true, "", nil
	rt, err := rest.TransportFor(tls)
	if err != nil {
		t.Fatal(err)
	}
	k.http = &http.Client{Transport: rt, Timeout: 30 * time.Second}
	return k
}

func (k *kubeletNode) script(c *framework.Cluster, env []string, cmd string) error {
	sh := exec.Command("bash", filepath.Join(c.RepoRoot, "hack", "kubelet-node.sh"), cmd)
	sh.Env = append(os.Environ(), env...)
	sh.Stdout, sh.Stderr = os.Stderr, os.Stderr
	return sh.Run()
}

// readEnvFile reads the KEY=value lines the script writes for its callers.
func readEnvFile(t *testing.T, path string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), "="); ok {
			out[k] = v
		}
	}
	return out
}

// pid is the PID of one of the node's processes: "kubelet" or "containerd".
func (k *kubeletNode) pid(name string) int {
	b, err := os.ReadFile(filepath.Join(k.dir, "pids", name+".pid"))
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return p
}

// podLabel is the label the kubelet puts on a pod's sandbox and containers.
const podLabel = "io.kubernetes.pod.uid"

// sandboxes counts containerd's ready sandboxes of the pod. The kubelet
// stops a deleted pod's sandbox (its containers killed first, CNI DEL, the
// pause process ended) at once, and removes its record later, in its
// container GC (every minute): a stopped sandbox is a pod gone.
func (k *kubeletNode) sandboxes(ctx context.Context, uid types.UID) (int, error) {
	resp, err := k.cri.ListPodSandbox(ctx, &cri.ListPodSandboxRequest{
		Filter: &cri.PodSandboxFilter{LabelSelector: map[string]string{podLabel: string(uid)},
			State: &cri.PodSandboxStateValue{State: cri.PodSandboxState_SANDBOX_READY}}})
	if err != nil {
		return 0, err
	}
	return len(resp.Items), nil
}

// startTimes are the moments containerd recorded for a pod's start: its sandbox made, its
// container created and started.
type startTimes struct{ sandbox, created, started time.Time }

func (k *kubeletNode) startTimes(ctx context.Context, uid types.UID) (startTimes, error) {
	var st startTimes
	filter := map[string]string{podLabel: string(uid)}
	sbs, err := k.cri.ListPodSandbox(ctx, &cri.ListPodSandboxRequest{Filter: &cri.PodSandboxFilter{LabelSelector: filter}})
	if err != nil || len(sbs.Items) != 1 {
		return st, fmt.Errorf("pod %s: sandboxes %v (%v)", uid, sbs.GetItems(), err)
	}
	cs, err := k.cri.ListContainers(ctx, &cri.ListContainersRequest{Filter: &cri.ContainerFilter{LabelSelector: filter}})
	if err != nil || len(cs.Containers) != 1 {
		return st, fmt.Errorf("pod %s: containers %v (%v)", uid, cs.GetContainers(), err)
	}
	status, err := k.cri.ContainerStatus(ctx, &cri.ContainerStatusRequest{ContainerId: cs.Containers[0].Id})
	if err != nil {
		return st, err
	}
	st.sandbox = time.Unix(0, sbs.Items[0].CreatedAt)
	st.created, st.started = time.Unix(0, status.Status.CreatedAt), time.Unix(0, status.Status.StartedAt)
	return st, nil
}
