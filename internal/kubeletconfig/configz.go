package kubeletconfig

import (
	"encoding/json"
	"net/http"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Handler serves /configz as the kubelet's component-base configz does:
// {"kubeletconfig": <the effective KubeletConfiguration>}. The kubelet API
// authorizes it (nodes/configz, then nodes/proxy) in front of this.
func Handler(kc *kubeletv1beta1.KubeletConfiguration) (http.Handler, error) {
	kc = kc.DeepCopy()
	kc.APIVersion = kubeletv1beta1.SchemeGroupVersion.String()
	kc.Kind = "KubeletConfiguration"
	body, err := json.Marshal(map[string]any{"kubeletconfig": kc})
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}), nil
}
