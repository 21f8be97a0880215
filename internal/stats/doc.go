// Package stats computes the kubelet's /stats/summary and /metrics/resource
// for a runlet node: node figures from the host (procfs, statfs), pod and
// container figures from the backend's stats of the containers the PLEG
// cache knows to be running, and disk figures as the kubelet's du-based
// measurement finds them: the pods' volumes under --root-dir, the
// containers' logs and writable layers where the backend keeps them, and
// their sum as each pod's ephemeral storage. The eviction manager reads the
// node's signals from NodeSummary, which asks the backend nothing.
//
// What a cAdvisor-backed kubelet reports and runlet does not: PSI, per-pod
// log directories (podman keeps logs per container), persistent volume
// stats, and the "kubelet"/"runtime" system containers (only "pods" is
// reported). UsageNanoCores is a rate between two scrapes (kept per
// container); the first scrape of a container falls back to its average
// since it started.
package stats
