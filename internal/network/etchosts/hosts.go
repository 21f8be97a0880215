/*
Copyright 2015 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package etchosts writes a pod's kubelet-managed /etc/hosts and names the
// pod's host, as the kubelet does. The functions are those of
// k8s.io/kubernetes/pkg/kubelet/kubelet_pods.go and pkg/kubelet/util/util.go
// (v1.37.2), with the node's hosts file as a parameter.
package etchosts

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Path is where the managed file is mounted in every container.
const Path = "/etc/hosts"

const (
	managedHostsHeader                = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderWithHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
)

// ShouldMount reports whether the container gets the managed file: only once
// the pod has an IP (or uses the host's network), and never when the
// container mounts something of its own at /etc/hosts (shouldMountHostsFile
// and makeMounts).
func ShouldMount(pod *v1.Pod, podIPs []string, c *v1.Container) bool {
	if len(podIPs) == 0 && !pod.Spec.HostNetwork {
		return false
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath == Path {
			return false
		}
	}
	return true
}

// Ensure writes the pod's hosts file at fileName (ensureHostsFile): the
// node's hosts file (nodeHostsFile) plus the aliases for a pod on the host's
// network, else the managed content.
func Ensure(fileName, nodeHostsFile string, hostIPs []string, hostName, hostDomainName string, hostAliases []v1.HostAlias, useHostNetwork bool) error {
	var hostsFileContent []byte
	var err error

	if useHostNetwork {
		// if Pod is using host network, read hosts file from the node's filesystem.
		hostsFileContent, err = nodeHostsFileContent(nodeHostsFile, hostAliases)
		if err != nil {
			return err
		}
	} else {
		// if Pod is not using host network, create a managed hosts file with Pod IP and other information.
		hostsFileContent = managedHostsFileContent(hostIPs, hostName, hostDomainName, hostAliases)
	}

	hostsFilePerm := os.FileMode(0644)
	if err := os.WriteFile(fileName, hostsFileContent, hostsFilePerm); err != nil {
		return err
	}
	return os.Chmod(fileName, hostsFilePerm)
}

// nodeHostsFileContent reads the content of node's hosts file.
func nodeHostsFileContent(hostsFilePath string, hostAliases []v1.HostAlias) ([]byte, error) {
	hostsFileContent, err := os.ReadFile(hostsFilePath)
	if err != nil {
		return nil, err
	}
	var buffer bytes.Buffer
	buffer.WriteString(managedHostsHeaderWithHostNetwork)
	buffer.Write(hostsFileContent)
	buffer.Write(hostsEntriesFromHostAliases(hostAliases))
	return buffer.Bytes(), nil
}

// managedHostsFileContent generates the content of the managed etc hosts based on Pod IPs and other
// information.
func managedHostsFileContent(hostIPs []string, hostName, hostDomainName string, hostAliases []v1.HostAlias) []byte {
	var buffer bytes.Buffer
	buffer.WriteString(managedHostsHeader)
	buffer.WriteString("127.0.0.1\tlocalhost\n")                      // ipv4 localhost
	buffer.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n") // ipv6 localhost
	buffer.WriteString("fe00::0\tip6-localnet\n")
	buffer.WriteString("fe00::0\tip6-mcastprefix\n")
	buffer.WriteString("fe00::1\tip6-allnodes\n")
	buffer.WriteString("fe00::2\tip6-allrouters\n")
	if len(hostDomainName) > 0 {
		// host entry generated for all IPs in podIPs
		// podIPs field is populated for clusters even
		// dual-stack feature flag is not enabled.
		for _, hostIP := range hostIPs {
			fmt.Fprintf(&buffer, "%s\t%s.%s\t%s\n", hostIP, hostName, hostDomainName, hostName)
		}
	} else {
		for _, hostIP := range hostIPs {
			fmt.Fprintf(&buffer, "%s\t%s\n", hostIP, hostName)
		}
	}
	buffer.Write(hostsEntriesFromHostAliases(hostAliases))
	return buffer.Bytes()
}

func hostsEntriesFromHostAliases(hostAliases []v1.HostAlias) []byte {
	if len(hostAliases) == 0 {
		return []byte{}
	}

	var buffer bytes.Buffer
	buffer.WriteString("\n")
	buffer.WriteString("# Entries added by HostAliases.\n")
	// for each IP, write all aliases onto single line in hosts file
	for _, hostAlias := range hostAliases {
		fmt.Fprintf(&buffer, "%s\t%s\n", hostAlias.IP, strings.Join(hostAlias.Hostnames, "\t"))
	}
	return buffer.Bytes()
}
