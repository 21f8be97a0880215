package cni

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
)

// hostPorts holds a socket on every hostPort a pod publishes, as the
// kubelet's kubenet hostport manager does: portmap only rewrites packets, so
// without the socket a port a host process already holds would be given
// out silently, and a later process could take it from the pod. Traffic
// for the port is rewritten before it reaches the socket.
type hostPorts struct {
	mu   sync.Mutex
	held map[string][]io.Closer // attachment ID -> sockets
}

func newHostPorts() *hostPorts { return &hostPorts{held: map[string][]io.Closer{}} }

// hold opens the pod's host ports for attachment id; none is held on error.
func (h *hostPorts) hold(id string, pod Pod) error {
	var open []io.Closer
	for _, p := range pod.Ports {
		c, err := listenHostPort(p)
		if err != nil {
			for _, o := range open {
				o.Close()
			}
			return fmt.Errorf("cannot open hostport %d for pod %s_%s: %w", p.HostPort, pod.Name, pod.Namespace, err)
		}
		if c != nil {
			open = append(open, c)
		}
	}
	h.mu.Lock()
	h.held[id] = append(h.held[id], open...)
	h.mu.Unlock()
	return nil
}

func (h *hostPorts) release(id string) {
	h.mu.Lock()
	open := h.held[id]
	delete(h.held, id)
	h.mu.Unlock()
	for _, c := range open {
		c.Close()
	}
}

// listenHostPort opens one host port on its host IP (all IPv4 addresses
// when none); SCTP is not held, as the kubelet did not.
func listenHostPort(p PortMapping) (io.Closer, error) {
	family := "4"
	if ip := net.ParseIP(p.HostIP); ip != nil && ip.To4() == nil {
		family = "6"
	}
	addr := net.JoinHostPort(p.HostIP, strconv.Itoa(int(p.HostPort)))
	switch strings.ToLower(p.Protocol) {
	case "", "tcp":
		return net.Listen("tcp"+family, addr)
	case "udp":
		return net.ListenPacket("udp"+family, addr)
	}
	return nil, nil
}
