// Package pgcluster creates a throwaway PostgreSQL 15 cluster on its own
// port with the Debian cluster tools, so a test can crash and restart it
// without touching the shared server.
package pgcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os/exec"
	"strconv"
)

// Version is the PostgreSQL major version the clusters run.
const Version = "15"

// Cluster is a throwaway cluster.
type Cluster struct {
	Name string
	Port int
}

// Create makes and starts a new cluster named chaos<random> on a free
// port; its pg_hba.conf trusts local and host (127.0.0.1) connections.
func Create(ctx context.Context) (*Cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	c := &Cluster{Name: "chaos" + hex.EncodeToString(b[:]), Port: port}
	if err := run(ctx, "pg_createcluster", Version, c.Name, "-p", strconv.Itoa(port),
		"--", "--auth-local=trust", "--auth-host=trust"); err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		_ = c.Drop(context.WithoutCancel(ctx))
		return nil, err
	}
	return c, nil
}

// URL is the cluster's connection URL for database postgres.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port)
}

// Start starts the cluster.
func (c *Cluster) Start(ctx context.Context) error {
	return run(ctx, "pg_ctlcluster", Version, c.Name, "start")
}

// Crash stops the cluster the way a power cut would: immediate mode, no
// checkpoint; the next start runs crash recovery.
func (c *Cluster) Crash(ctx context.Context) error {
	return run(ctx, "pg_ctlcluster", Version, c.Name, "stop", "-m", "immediate")
}

// Drop stops the cluster and deletes it with its data.
func (c *Cluster) Drop(ctx context.Context) error {
	return run(ctx, "pg_dropcluster", "--stop", Version, c.Name)
}

func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgcluster: %s %v: %w: %s", name, args, err, out)
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgcluster: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
