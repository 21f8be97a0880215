package libpod

import (
	"encoding/json"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// The JSON shapes below are the subset of libpod's specgen and report types
// runlet uses; names match podman 4.3 and 5.x.

// PortMapping is libpod's types.PortMapping.
type PortMapping struct {
	HostIP        string `json:"host_ip,omitempty"`
	ContainerPort uint16 `json:"container_port"`
	HostPort      uint16 `json:"host_port,omitempty"`
	Protocol      string `json:"protocol,omitempty"`
}

// Namespace is specgen.Namespace.
type Namespace struct {
	NSMode string `json:"nsmode,omitempty"`
	Value  string `json:"value,omitempty"`
}

// PodSpec is the body of POST /pods/create.
type PodSpec struct {
	Name             string            `json:"name,omitempty"`
	InfraName        string            `json:"infra_name,omitempty"`
	Hostname         string            `json:"hostname,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	SharedNamespaces []string          `json:"shared_namespaces,omitempty"`
	NetNS            *Namespace        `json:"netns,omitempty"`
	UtsNS            *Namespace        `json:"utsns,omitempty"`
	PortMappings     []PortMapping     `json:"portmappings,omitempty"`
	// CgroupParent is where podman makes the pod's cgroup.
	CgroupParent string `json:"cgroup_parent,omitempty"`
	PodSecuritySpec
}

// Mount is an OCI runtime-spec mount.
type Mount struct {
	Destination string   `json:"destination"`
	Type        string   `json:"type,omitempty"`
	Source      string   `json:"source,omitempty"`
	Options     []string `json:"options,omitempty"`
}

// ImageVolume is an image mounted into a container (libpod's specgen
// field names; SubPath came with podman 5).
type ImageVolume struct {
	Source      string `json:"Source"`
	Destination string `json:"Destination"`
	ReadWrite   bool   `json:"ReadWrite"`
	SubPath     string `json:"subPath,omitempty"`
}

// RLimit is one POSIX rlimit of a container (type is a short name: "nofile").
type RLimit struct {
	Type string `json:"type"`
	Hard uint64 `json:"hard"`
	Soft uint64 `json:"soft"`
}

// ContainerSpec is the body of POST /containers/create (specgen.SpecGenerator).
type ContainerSpec struct {
	Name         string            `json:"name,omitempty"`
	Pod          string            `json:"pod,omitempty"`
	Image        string            `json:"image"`
	Entrypoint   []string          `json:"entrypoint,omitempty"`
	Command      []string          `json:"command,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	UnsetEnvAll  bool              `json:"unsetenvall,omitempty"`
	WorkDir      string            `json:"work_dir,omitempty"`
	Stdin        bool              `json:"stdin,omitempty"`
	Terminal     bool              `json:"terminal,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Mounts       []Mount           `json:"mounts,omitempty"`
	ImageVolumes []ImageVolume     `json:"image_volumes,omitempty"`
	// ResourceLimits are the OCI runtime-spec's, as podman's specgen
	// takes them.
	ResourceLimits *specs.LinuxResources `json:"resource_limits,omitempty"`
	RLimits        []RLimit              `json:"r_limits,omitempty"`
	RestartPolicy  string                `json:"restart_policy,omitempty"`
	StopTimeout    *uint                 `json:"stop_timeout,omitempty"`
	OCIRuntime     string                `json:"oci_runtime,omitempty"`
	OOMScoreAdj    *int                  `json:"oom_score_adj,omitempty"`
	NetNS          *Namespace            `json:"netns,omitempty"`
	// CgroupsMode "no-conmon" leaves the container's conmon in the
	// service's cgroup instead of one below the pod's.
	CgroupsMode string `json:"cgroups_mode,omitempty"`
	SecuritySpec
}

// ListContainer is one entry of GET /containers/json.
type ListContainer struct {
	ID        string            `json:"Id"`
	Names     []string          `json:"Names"`
	Image     string            `json:"Image"`
	ImageID   string            `json:"ImageID"`
	State     string            `json:"State"`
	ExitCode  int               `json:"ExitCode"`
	Exited    bool              `json:"Exited"`
	Created   time.Time         `json:"Created"`
	StartedAt int64             `json:"StartedAt"`
	ExitedAt  int64             `json:"ExitedAt"`
	Labels    map[string]string `json:"Labels"`
	Pod       string            `json:"Pod"`
	PodName   string            `json:"PodName"`
	IsInfra   bool              `json:"IsInfra"`
	Pid       int               `json:"Pid"`
}

// ListPod is one entry of GET /pods/json.
type ListPod struct {
	ID         string            `json:"Id"`
	Name       string            `json:"Name"`
	Status     string            `json:"Status"`
	Created    time.Time         `json:"Created"`
	InfraID    string            `json:"InfraId"`
	Labels     map[string]string `json:"Labels"`
	Containers []struct {
		ID     string `json:"Id"`
		Status string `json:"Status"`
	} `json:"Containers"`
}

// InspectContainer is the subset of GET /containers/{id}/json runlet reads.
type InspectContainer struct {
	ID        string    `json:"Id"`
	Name      string    `json:"Name"`
	Created   time.Time `json:"Created"`
	Image     string    `json:"Image"` // image ID
	ImageName string    `json:"ImageName"`
	Pod       string    `json:"Pod"`
	IsInfra   bool      `json:"IsInfra"`
	StaticDir string    `json:"StaticDir"` // conmon's bundle: its "oom" file marks an OOM kill
	State     struct {
		Status     string    `json:"Status"`
		Running    bool      `json:"Running"`
		OOMKilled  bool      `json:"OOMKilled"`
		Pid        int       `json:"Pid"`
		ConmonPid  int       `json:"ConmonPid"`
		ExitCode   int       `json:"ExitCode"`
		Error      string    `json:"Error"`
		StartedAt  time.Time `json:"StartedAt"`
		FinishedAt time.Time `json:"FinishedAt"`
		CgroupPath string    `json:"CgroupPath"`
	} `json:"State"`
	Config struct {
		Labels map[string]string `json:"Labels"`
		Tty    bool              `json:"Tty"`
		// StopSignal is a number in podman 4, a name ("SIGTERM") in 5.
		StopSignal json.RawMessage `json:"StopSignal"`
	} `json:"Config"`
	NetworkSettings struct {
		IPAddress         string `json:"IPAddress"`
		GlobalIPv6Address string `json:"GlobalIPv6Address"`
		Networks          map[string]struct {
			IPAddress         string `json:"IPAddress"`
			GlobalIPv6Address string `json:"GlobalIPv6Address"`
		} `json:"Networks"`
	} `json:"NetworkSettings"`
	HostConfig struct {
		NetworkMode string `json:"NetworkMode"`
		LogConfig   struct {
			Type string `json:"Type"`
			Path string `json:"Path"`
		} `json:"LogConfig"`
	} `json:"HostConfig"`
	// GraphDriver locates the writable layer (overlay's UpperDir).
	GraphDriver struct {
		Data struct {
			UpperDir string `json:"UpperDir"`
		} `json:"Data"`
	} `json:"GraphDriver"`
}

// InspectPod is the subset of GET /pods/{id}/json runlet reads.
type InspectPod struct {
	ID               string            `json:"Id"`
	Name             string            `json:"Name"`
	Created          time.Time         `json:"Created"`
	State            string            `json:"State"`
	Labels           map[string]string `json:"Labels"`
	InfraContainerID string            `json:"InfraContainerID"`
	// CgroupPath is the pod cgroup, below the hierarchies' root, in
	// CgroupParent.
	CgroupPath   string `json:"CgroupPath"`
	CgroupParent string `json:"CgroupParent"`
	Containers   []struct {
		ID    string `json:"Id"`
		State string `json:"State"`
	} `json:"Containers"`
}

// ImageInspect is the subset of GET /images/{ref}/json runlet reads.
type ImageInspect struct {
	ID   string `json:"Id"`
	Size int64  `json:"Size"`
	// GraphDriver locates the image's layers: overlay's UpperDir is the top
	// one, LowerDir the others, top first, colon-separated.
	GraphDriver struct {
		Data struct {
			UpperDir string `json:"UpperDir"`
			LowerDir string `json:"LowerDir"`
		} `json:"Data"`
	} `json:"GraphDriver"`
	Config struct {
		Env        []string `json:"Env"`
		Entrypoint []string `json:"Entrypoint"`
		Cmd        []string `json:"Cmd"`
		WorkingDir string   `json:"WorkingDir"`
		User       string   `json:"User"`
	} `json:"Config"`
}

// Info is the subset of GET /info runlet reads.
type Info struct {
	Host struct {
		Arch          string `json:"arch"`
		OS            string `json:"os"`
		Kernel        string `json:"kernel"`
		CgroupVersion string `json:"cgroupVersion"`
		CgroupManager string `json:"cgroupManager"`
		EventLogger   string `json:"eventLogger"`
		OCIRuntime    struct {
			Name string `json:"name"`
			Path string `json:"path"`
		} `json:"ociRuntime"`
		Security struct {
			Rootless bool `json:"rootless"`
		} `json:"security"`
		CPUs     int   `json:"cpus"`
		MemTotal int64 `json:"memTotal"`
	} `json:"host"`
	Version struct {
		APIVersion string `json:"APIVersion"`
		Version    string `json:"Version"`
	} `json:"version"`
	Store struct {
		GraphRoot       string `json:"graphRoot"`
		GraphDriverName string `json:"graphDriverName"`
	} `json:"store"`
}

// ExecConfig is the body of POST /containers/{id}/exec.
type ExecConfig struct {
	AttachStdin  bool     `json:"AttachStdin"`
	AttachStdout bool     `json:"AttachStdout"`
	AttachStderr bool     `json:"AttachStderr"`
	Tty          bool     `json:"Tty"`
	Cmd          []string `json:"Cmd"`
	Env          []string `json:"Env,omitempty"`
	WorkingDir   string   `json:"WorkingDir,omitempty"`
	User         string   `json:"User,omitempty"`
}

// ExecInspect is the subset of GET /exec/{id}/json runlet reads.
type ExecInspect struct {
	ID       string `json:"ID"`
	Running  bool   `json:"Running"`
	ExitCode int    `json:"ExitCode"`
	Pid      int    `json:"Pid"`
}

// Stats is one entry of GET /containers/stats?stream=false.
type Stats struct {
	ContainerID string `json:"ContainerID"`
	CPUNano     uint64 `json:"CPUNano"`
	MemUsage    uint64 `json:"MemUsage"`
	MemLimit    uint64 `json:"MemLimit"`
	NetInput    uint64 `json:"NetInput"`
	NetOutput   uint64 `json:"NetOutput"`
	BlockInput  uint64 `json:"BlockInput"`
	BlockOutput uint64 `json:"BlockOutput"`
	PIDs        uint64 `json:"PIDs"`
	SystemNano  uint64 `json:"SystemNano"`
}

// Event is one line of GET /events.
type Event struct {
	Type   string `json:"Type"`
	Action string `json:"Action"`
	Actor  struct {
		ID         string            `json:"ID"`
		Attributes map[string]string `json:"Attributes"`
	} `json:"Actor"`
	Time     int64 `json:"time"`
	TimeNano int64 `json:"timeNano"`
}
