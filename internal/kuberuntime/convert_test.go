package kuberuntime

import (
	"fmt"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestContainerConfigMapping(t *testing.T) {
	uid, gid, grace := int64(1000), int64(2000), int64(5)
	cases := []struct {
		name      string
		mod       func(*v1.Pod)
		cmd, args []string
		user      string
		stop      time.Duration
		cpuMillis int64
		memory    int64
	}{
		{name: "image defaults", mod: func(*v1.Pod) {}, stop: 30 * time.Second},
		{name: "command and args", mod: func(p *v1.Pod) {
			p.Spec.Containers[0].Command, p.Spec.Containers[0].Args = []string{"sh", "-c"}, []string{"echo hi"}
		}, cmd: []string{"sh", "-c"}, args: []string{"echo hi"}, stop: 30 * time.Second},
		{name: "args only", mod: func(p *v1.Pod) { p.Spec.Containers[0].Args = []string{"--flag"} },
			args: []string{"--flag"}, stop: 30 * time.Second},
		{name: "user and grace", mod: func(p *v1.Pod) {
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{RunAsUser: &uid, RunAsGroup: &gid}
			p.Spec.TerminationGracePeriodSeconds = &grace
		}, user: "1000:2000", stop: 5 * time.Second},
		{name: "pod user", mod: func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: &uid}
		}, user: "1000", stop: 30 * time.Second},
		{name: "limits", mod: func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("64Mi")}
		}, stop: 30 * time.Second, cpuMillis: 500, memory: 64 << 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			pod := newPod(v1.RestartPolicyAlways, "c")
			tc.mod(pod)
			if _, err := e.sync(pod); err != nil {
				t.Fatal(err)
			}
			cfg, ok := e.f.Config(e.latest(pod, "c").ID)
			if !ok {
				t.Fatal("no config")
			}
			if fmt.Sprint(cfg.Command) != fmt.Sprint(tc.cmd) || fmt.Sprint(cfg.Args) != fmt.Sprint(tc.args) {
				t.Errorf("command %q args %q; want %q %q", cfg.Command, cfg.Args, tc.cmd, tc.args)
			}
			if userOf(cfg.Security) != tc.user || cfg.StopTimeout != tc.stop || cfg.Image != "img:1" || cfg.Name != "c" {
				t.Errorf("config = %+v", cfg)
			}
			if cfg.Resources.CPUMillis != tc.cpuMillis || cfg.Resources.MemoryBytes != tc.memory {
				t.Errorf("resources = %+v", cfg.Resources)
			}
		})
	}
}

func TestHashContainerChangesWithSpec(t *testing.T) {
	a := v1.Container{Name: "c", Image: "img:1"}
	b := a
	b.Image = "img:2"
	if HashContainer(&a) == HashContainer(&b) || HashContainer(&a) != HashContainer(a.DeepCopy()) {
		t.Error("hash does not follow the spec")
	}
}

// userOf spells the config's user as "uid[:gid]" ("" for the image's).
func userOf(s runtime.SecurityConfig) string {
	out := ""
	if s.RunAsUser != nil {
		out = fmt.Sprint(*s.RunAsUser)
	}
	if s.RunAsGroup != nil {
		out += fmt.Sprintf(":%d", *s.RunAsGroup)
	}
	return out
}
