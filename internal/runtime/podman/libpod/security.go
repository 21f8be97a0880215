package libpod

import "github.com/opencontainers/runtime-spec/specs-go"

// SecuritySpec is the security part of libpod's create spec (specgen's
// ContainerSecurityConfig and the PID and IPC namespaces), embedded in
// ContainerSpec. Names are podman 4.3's, checked against its service.
type SecuritySpec struct {
	User               string     `json:"user,omitempty"`
	Groups             []string   `json:"groups,omitempty"`
	Privileged         bool       `json:"privileged,omitempty"`
	CapAdd             []string   `json:"cap_add,omitempty"`
	CapDrop            []string   `json:"cap_drop,omitempty"`
	NoNewPrivileges    bool       `json:"no_new_privileges,omitempty"`
	ReadOnlyFilesystem bool       `json:"read_only_filesystem,omitempty"`
	SeccompProfilePath string     `json:"seccomp_profile_path,omitempty"`
	Mask               []string   `json:"mask,omitempty"`
	Unmask             []string   `json:"unmask,omitempty"`
	SelinuxOpts        []string   `json:"selinux_opts,omitempty"`
	ApparmorProfile    string     `json:"apparmor_profile,omitempty"`
	PidNS              *Namespace `json:"pidns,omitempty"`
	IpcNS              *Namespace `json:"ipcns,omitempty"`
}

// PodSecuritySpec is the pod-level part of POST /pods/create runlet sets
// besides the basics: sysctls for the shared namespaces and the pod
// cgroup's limits. Embedded in PodSpec.
type PodSecuritySpec struct {
	Sysctl         map[string]string     `json:"sysctl,omitempty"`
	ResourceLimits *specs.LinuxResources `json:"resource_limits,omitempty"`
	// IDMappings give the pod a user namespace of its own, which its infra
	// container makes and its containers join; UserNS must then be
	// private, or the infra's defaults (the host's) win over them.
	IDMappings *IDMappings `json:"idmappings,omitempty"`
	UserNS     *Namespace  `json:"userns,omitempty"`
}

// IDMappings are containers/storage's IDMappingOptions (field names as Go
// spells them: the type has no JSON tags).
type IDMappings struct {
	HostUIDMapping bool    `json:"HostUIDMapping"`
	HostGIDMapping bool    `json:"HostGIDMapping"`
	UIDMap         []IDMap `json:"UIDMap"`
	GIDMap         []IDMap `json:"GIDMap"`
}

// IDMap is one range of an ID mapping.
type IDMap struct {
	ContainerID int `json:"container_id"`
	HostID      int `json:"host_id"`
	Size        int `json:"size"`
}
