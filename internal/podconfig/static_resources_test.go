package podconfig

import (
	"strings"
	"testing"
)

func TestStaticResourcesAndSysctls(t *testing.T) {
	withLimits := strings.Replace(nginxManifest, "    image: nginx:1.27\n",
		"    image: nginx:1.27\n    resources: {limits: {cpu: 500m, memory: 64Mi}, requests: {cpu: 100m}}\n", 1)
	pod := mustParse(t, withLimits, "n1", "/m/x")
	r := pod.Spec.Containers[0].Resources.Requests
	if r.Cpu().MilliValue() != 100 || r.Memory().Value() != 64<<20 {
		t.Errorf("requests = %v; want cpu 100m kept, memory defaulted to its limit", r)
	}
	cases := map[string]struct{ to, want string }{
		"negative limit":    {"    resources: {limits: {memory: -1}}\n", "must be greater than or equal to 0"},
		"request > limit":   {"    resources: {limits: {cpu: 1}, requests: {cpu: 2}}\n", "must be less than or equal to cpu limit of 1"},
		"bad sysctl":        {"  securityContext: {sysctls: [{name: foo-, value: x}]}\n", "spec.securityContext.sysctls[0].name"},
		"duplicate sysctls": {"  securityContext: {sysctls: [{name: a.b, value: \"1\"}, {name: a.b, value: \"2\"}]}\n", "Duplicate value"},
	}
	for name, c := range cases {
		data := strings.Replace(nginxManifest, "    image: nginx:1.27\n", "    image: nginx:1.27\n"+c.to, 1)
		if strings.HasPrefix(c.to, "  securityContext") {
			data = nginxManifest + c.to
		}
		_, err := parseManifest([]byte(data), staticSource{kind: FileSource, location: "/m/x", nodeName: "n1"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", name, err, c.want)
		}
	}
}
