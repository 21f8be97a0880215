package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// listenEarly makes sure both of runlet's ports are free before anything
// else starts, so a clash is one clear fatal error. The metrics listener is
// kept and served later; the kubelet API's is released for the framework,
// which binds it itself when the node starts.
func listenEarly(o *options) (metrics net.Listener, err error) {
	kubeletAddr := net.JoinHostPort(o.Address, strconv.Itoa(int(o.KubeletPort)))
	l, err := net.Listen("tcp", kubeletAddr)
	if err != nil {
		return nil, portError("--kubelet-port", kubeletAddr, err)
	}
	_ = l.Close()
	if o.MetricsAddr == "" {
		return nil, nil
	}
	metrics, err = net.Listen("tcp", o.MetricsAddr)
	if err != nil {
		return nil, portError("--metrics-addr", o.MetricsAddr, err)
	}
	return metrics, nil
}

func portError(flag, addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s: %s is already in use (by a kubelet or another runlet on this host?); choose a free port", flag, addr)
	}
	return fmt.Errorf("%s: cannot listen on %s: %w", flag, addr, err)
}
