// Command testserver is runlet's test workload for probes and lifecycle
// hooks: an HTTP server (/healthz, /echo, /redirect), optionally HTTPS with a
// self-signed certificate, and a gRPC health server, in one static binary
// (hack/images-testserver.sh packs it with busybox into
// localhost/runlet/testserver:latest). Every HTTP request is logged on
// stdout, so a test reads from the pod's log what a probe or hook sent.
//
// /healthz answers 500 once --unhealthy-after has passed since the start, or
// while the file /tmp/unhealthy exists; the gRPC health of the server ("")
// follows it. The gRPC service "down" is always NOT_SERVING.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

var start = time.Now()

func main() {
	httpPort := flag.Int("http-port", 8080, "HTTP port")
	httpsPort := flag.Int("https-port", 8443, "HTTPS port (0: none)")
	grpcPort := flag.Int("grpc-port", 5000, "gRPC health port (0: none)")
	unhealthyAfter := flag.Duration("unhealthy-after", 0, "answer /healthz with 500 after this long (0: never)")
	certFile := flag.String("tls-cert-file", "", "the HTTPS port's certificate (PEM); empty: a self-signed one")
	keyFile := flag.String("tls-private-key-file", "", "the key of --tls-cert-file")
	flag.Parse()
	log.SetFlags(0)
	log.SetOutput(os.Stdout)

	healthy := func() bool {
		if _, err := os.Stat("/tmp/unhealthy"); err == nil {
			return false
		}
		return *unhealthyAfter == 0 || time.Since(start) < *unhealthyAfter
	}
	mux := routes(healthy)
	go serve(&http.Server{Addr: ":" + strconv.Itoa(*httpPort), Handler: mux, ReadHeaderTimeout: 10 * time.Second}, nil)
	if *httpsPort != 0 {
		go serve(&http.Server{Addr: ":" + strconv.Itoa(*httpsPort), Handler: mux, ReadHeaderTimeout: 10 * time.Second}, tlsConfig(*certFile, *keyFile))
	}
	if *grpcPort != 0 {
		go serveGRPC(*grpcPort, healthy)
	}
	log.Printf("serving http :%d https :%d grpc :%d", *httpPort, *httpsPort, *grpcPort)
	// PID 1 gets no default signal handling: exit on SIGTERM explicitly.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	log.Printf("exiting on %v", <-sig)
}

func routes(healthy func() bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		logRequest(r)
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		logRequest(r)
		if !healthy() {
			http.Error(w, "unhealthy", http.StatusInternalServerError)
			return
		}
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		logRequest(r)
		_, _ = fmt.Fprintln(w, r.URL.Query().Get("msg"))
	})
	mux.HandleFunc("/validate", validate)
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		logRequest(r)
		http.Redirect(w, r, r.URL.Query().Get("loc"), http.StatusFound)
	})
	return mux
}

// logRequest writes one line a test can match: method, URI, user agent and
// the X-Probe header.
func logRequest(r *http.Request) {
	log.Printf("%s %s ua=%q x-probe=%q", r.Method, r.URL.RequestURI(), r.UserAgent(), r.Header.Get("X-Probe"))
}

func serve(srv *http.Server, tlsCfg *tls.Config) {
	var err error
	if tlsCfg != nil {
		srv.TLSConfig = tlsCfg
		err = srv.ListenAndServeTLS("", "")
	} else {
		err = srv.ListenAndServe()
	}
	log.Fatalf("serving %s: %v", srv.Addr, err)
}

func serveGRPC(port int, healthy func() bool) {
	lis, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		log.Fatalf("grpc: %v", err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() {
		for {
			st := healthpb.HealthCheckResponse_SERVING
			if !healthy() {
				st = healthpb.HealthCheckResponse_NOT_SERVING
			}
			hs.SetServingStatus("", st)
			time.Sleep(200 * time.Millisecond)
		}
	}()
	log.Fatalf("grpc: %v", srv.Serve(lis))
}

// denyLabel on an object makes the /validate webhook refuse it.
const denyLabel = "runlet.e2e/deny"

// validate is a validating admission webhook: it refuses objects that carry
// denyLabel, and says so in its message.
func validate(w http.ResponseWriter, r *http.Request) {
	logRequest(r)
	var review struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Request    struct {
			UID    string `json:"uid"`
			Object struct {
				Metadata struct {
					Name   string            `json:"name"`
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
			} `json:"object"`
		} `json:"request"`
	}
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp := map[string]any{"uid": review.Request.UID, "allowed": true}
	meta := review.Request.Object.Metadata
	if v, ok := meta.Labels[denyLabel]; ok {
		resp["allowed"] = false
		resp["status"] = map[string]any{"code": 403, "message": fmt.Sprintf("testserver webhook denies %s: %s=%s", meta.Name, denyLabel, v)}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": review.APIVersion, "kind": review.Kind, "response": resp})
}

// tlsConfig serves the given certificate, or a self-signed one.
func tlsConfig(certFile, keyFile string) *tls.Config {
	if certFile == "" {
		return selfSigned()
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		log.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}}
}

// selfSigned makes a throw-away certificate for the HTTPS port.
func selfSigned() *tls.Config {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "testserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		log.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}
