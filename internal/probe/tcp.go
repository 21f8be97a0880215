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

// Adapted from k8s.io/kubernetes v1.37.2 pkg/probe/tcp/tcp.go.

package probe

import (
	"net"
	"strconv"
	"time"
)

// TCP checks that a TCP connection to host:port can be opened within timeout.
// If the socket can be opened, it returns Success; if not, Failure (timeouts included).
func TCP(host string, port int, timeout time.Duration) (Result, string, error) {
	d := Dialer()
	d.Timeout = timeout
	conn, err := d.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		// Convert errors to failures to handle timeouts.
		return Failure, err.Error(), nil
	}
	_ = conn.Close()
	return Success, "", nil
}
