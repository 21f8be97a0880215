// Package stats computes the kubelet's /stats/summary and /metrics/resource
// for a runlet node: node figures from the host (procfs, statfs), pod and
// container figures from the backend's stats of the containers the PLEG
// cache knows to be running.
//
// What a cAdvisor-backed kubelet reports and runlet does not: per-container
// rootfs and log usage, volume and ephemeral-storage stats, PSI, and the
// "kubelet"/"runtime" system containers (only "pods" is reported).
// UsageNanoCores is a rate between two scrapes (kept per container); the
// first scrape of a container falls back to its average since it started.
package stats
