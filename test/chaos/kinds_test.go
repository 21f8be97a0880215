package chaos

import (
	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The pods of the churn, by kind (the label kindLabel): what a node meets, with probes of each sort,
// configMap, secret and emptyDir volumes, pods that stop on SIGTERM and one that must be killed at the
// end of its grace period, and pods that complete.
const (
	kindLabel = "chaos.runlet.io/kind"
	// web serves a page made from the configMap and the secret, from an emptyDir, with HTTP probes.
	kindWeb = "web"
	// worker has two containers, env from the secret, and exec probes that read the configMap.
	kindWorker = "worker"
	// stubborn ignores SIGTERM: its stop waits out its grace period.
	kindStubborn = "stubborn"
	// job completes (restartPolicy Never or OnFailure).
	kindJob = "job"

	configMapName = "chaos-config"
	secretName    = "chaos-secret"
)

// completes tells the kinds whose pods end Succeeded from those that run until deleted.
func completes(kind string) bool { return kind == kindJob }

// podSpec shapes a pod of kind for node.
func podSpec(node, kind string, never bool) v1.PodSpec {
	spec := framework.PodFor(node, "", "").Spec
	// The pods stay through an outage of any length, as docs/autonomy.md advises: the cluster's
	// evictions are not what the soak tests.
	for _, key := range []string{v1.TaintNodeUnreachable, v1.TaintNodeNotReady} {
		spec.Tolerations = append(spec.Tolerations, v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute})
	}
	grace := int64(10)
	spec.TerminationGracePeriodSeconds = &grace
	switch kind {
	case kindWeb:
		web(&spec)
	case kindWorker:
		worker(&spec)
	case kindStubborn:
		grace = 3
		spec.Containers = []v1.Container{framework.Busybox("main", "sleep", "3600")} // PID 1 without a handler: TERM is ignored
	case kindJob:
		spec.RestartPolicy = v1.RestartPolicyOnFailure
		if never {
			spec.RestartPolicy = v1.RestartPolicyNever
		}
		spec.Containers = []v1.Container{framework.Busybox("main", "sh", "-c", "test -s /cfg/greeting && echo done")}
		spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}
		spec.Volumes = []v1.Volume{configMapVolume()}
	}
	return spec
}

func web(spec *v1.PodSpec) {
	c := framework.Busybox("web", "sh", "-c",
		`cat /cfg/greeting /sec/token >/www/index.html || exit 1; trap 'exit 0' TERM; httpd -f -p 8080 -h /www & wait`)
	c.VolumeMounts = []v1.VolumeMount{{Name: "www", MountPath: "/www"}, {Name: "cfg", MountPath: "/cfg"}, {Name: "sec", MountPath: "/sec"}}
	get := v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/index.html", Port: intstr.FromInt32(8080)}}
	c.ReadinessProbe = &v1.Probe{ProbeHandler: get, PeriodSeconds: 2, TimeoutSeconds: 5}
	// Lenient: under the soak's load a slow answer is no reason for a restart the checks would count.
	c.LivenessProbe = &v1.Probe{ProbeHandler: get, PeriodSeconds: 10, TimeoutSeconds: 10, FailureThreshold: 6}
	spec.Containers = []v1.Container{c}
	spec.Volumes = []v1.Volume{{Name: "www", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		configMapVolume(), {Name: "sec", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: secretName}}}}
}

func worker(spec *v1.PodSpec) {
	c := framework.Sleeper("work")
	c.VolumeMounts = []v1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}
	c.Env = []v1.EnvVar{{Name: "TOKEN", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: secretName}, Key: "token"}}}}
	read := v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"test", "-s", "/cfg/greeting"}}}
	c.ReadinessProbe = &v1.Probe{ProbeHandler: read, PeriodSeconds: 3, TimeoutSeconds: 10}
	// An exec probe needs the backend: one that cannot be asked (podman killed) is no failure.
	c.LivenessProbe = &v1.Probe{ProbeHandler: read, PeriodSeconds: 5, TimeoutSeconds: 10, FailureThreshold: 3}
	spec.Containers = []v1.Container{c, framework.Sleeper("side")}
	spec.Volumes = []v1.Volume{configMapVolume()}
}

func configMapVolume() v1.Volume {
	return v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: configMapName}}}}
}
