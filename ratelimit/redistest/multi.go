package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the name under which StartSentinel's Sentinels watch the master.
const SentinelMaster = "reqgate-test"

// Sentinel is a Redis master, its replica, and the Sentinels that watch them, each a private process.
type Sentinel struct {
	Master    string    // SentinelMaster
	Addrs     []string  // the Sentinels' host:port
	Nodes     []*Server // the master as started, then its replica
	sentinels []*exec.Cmd
}

// StartSentinel starts a master, one replica of it and n Sentinels (quorum n/2+1) that take a master silent for
// half a second for down and fail over at once, and returns once the Sentinels know the replica and each other
// (a failover can then happen). Everything stops when the test ends.
func StartSentinel(tb testing.TB, n int) *Sentinel {
	tb.Helper()
	master := startServer(tb)
	replica := startServer(tb, "--replicaof", "127.0.0.1", port(master.Addr))
	s := &Sentinel{Master: SentinelMaster, Nodes: []*Server{master, replica}}
	path, err := exec.LookPath("redis-sentinel")
	if err != nil {
		tb.Fatalf("redis-sentinel not installed (apt-get install -y redis-sentinel): %v", err)
	}
	for i := 0; i < n; i++ {
		dir := tb.TempDir()
		p := freePort(tb)
		conf := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nloglevel warning\n"+
			"sentinel monitor %s 127.0.0.1 %s %d\n"+
			"sentinel down-after-milliseconds %[3]s 500\n"+
			"sentinel failover-timeout %[3]s 2000\n", p, dir, SentinelMaster, port(master.Addr), n/2+1)
		// The Sentinel rewrites its configuration file, so it needs one of its own.
		file := filepath.Join(dir, "sentinel.conf")
		if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
			tb.Fatal(err)
		}
		cmd := exec.Command(path, file)
		if err := cmd.Start(); err != nil {
			tb.Fatalf("start redis-sentinel: %v", err)
		}
		s.sentinels = append(s.sentinels, cmd)
		s.Addrs = append(s.Addrs, "127.0.0.1:"+strconv.Itoa(p))
	}
	tb.Cleanup(func() {
		for _, c := range s.sentinels {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	s.waitReady(tb, n)
	return s
}

// waitReady waits until the replica is in sync and every Sentinel knows it and the n-1 other Sentinels.
func (s *Sentinel) waitReady(tb testing.TB, n int) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if s.ready(n) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("redistest: the Sentinels did not see the replica and each other within 30s")
}

func (s *Sentinel) ready(n int) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	r := redis.NewClient(&redis.Options{Addr: s.Nodes[1].Addr})
	info, err := r.Info(ctx, "replication").Result()
	_ = r.Close()
	if err != nil || !strings.Contains(info, "master_link_status:up") {
		return false
	}
	for _, a := range s.Addrs {
		c := redis.NewSentinelClient(&redis.Options{Addr: a})
		replicas, err1 := c.Replicas(ctx, s.Master).Result()
		others, err2 := c.Sentinels(ctx, s.Master).Result()
		_ = c.Close()
		if err1 != nil || err2 != nil || len(replicas) != 1 || len(others) != n-1 {
			return false
		}
		if flags := replicas[0]["flags"]; flags != "slave" {
			return false
		}
	}
	return true
}

// MasterAddr is the address of the master as the first Sentinel names it.
func (s *Sentinel) MasterAddr(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Addrs[0]})
	defer c.Close()
	hp, err := c.GetMasterAddrByName(ctx, s.Master).Result()
	if err != nil {
		tb.Fatalf("redistest: ask the Sentinel for the master: %v", err)
	}
	return hp[0] + ":" + hp[1]
}

// KillMaster kills the current master's process (as a crash would) and returns it.
func (s *Sentinel) KillMaster(tb testing.TB) *Server {
	tb.Helper()
	addr := s.MasterAddr(tb)
	for _, n := range s.Nodes {
		if n.Addr == addr {
			n.Stop()
			return n
		}
	}
	tb.Fatalf("redistest: the master %s is none of the nodes", addr)
	return nil
}

// WaitFailover waits until the Sentinels name a master other than old and it answers as a master.
func (s *Sentinel) WaitFailover(tb testing.TB, old string) string {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if addr := s.MasterAddr(tb); addr != old {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			r := redis.NewClient(&redis.Options{Addr: addr})
			role, err := r.Do(ctx, "ROLE").Slice()
			_ = r.Close()
			cancel()
			if err == nil && len(role) > 0 && role[0] == "master" {
				return addr
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("redistest: no failover away from %s within 30s", old)
	return ""
}

// Cluster is a Redis Cluster of private redis-server processes.
type Cluster struct {
	Nodes []*Server // the masters, then their replicas
}

// Addrs are the host:port of every node.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// StartCluster starts a Redis Cluster of 3 masters, each with replicas replicas, joins them with
// `redis-cli --cluster create` and returns once every node reports the cluster ok and every replica is in sync
// with its master. A node is taken for failed after 1 s, and a replica takes over however old its data.
func StartCluster(tb testing.TB, replicas int) *Cluster {
	tb.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		tb.Fatalf("redis-cli not installed (apt-get install -y redis-tools): %v", err)
	}
	c := &Cluster{}
	for i := 0; i < 3*(1+replicas); i++ {
		// The cluster bus gets a port of its own (by default the node's port + 10000, which may be taken or
		// beyond 65535).
		c.Nodes = append(c.Nodes, startServer(tb, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "1000", "--cluster-replica-validity-factor", "0",
			"--cluster-port", strconv.Itoa(freePort(tb))))
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c.ok() {
			return c
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("redistest: the cluster was not ok within 30s")
	return nil
}

func (c *Cluster) ok() bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, n := range c.Nodes {
		r := redis.NewClient(&redis.Options{Addr: n.Addr})
		info, err := r.ClusterInfo(ctx).Result()
		repl, err2 := r.Info(ctx, "replication").Result()
		_ = r.Close()
		if err != nil || err2 != nil || !strings.Contains(info, "cluster_state:ok") {
			return false
		}
		// A replica counts once it has its master's data: only then can it take over.
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return false
		}
	}
	if len(c.Nodes) > 3 {
		// redis-cli makes the replicas a moment after the cluster is ok.
		r := redis.NewClient(&redis.Options{Addr: c.Nodes[0].Addr})
		nodes, err := r.ClusterNodes(ctx).Result()
		_ = r.Close()
		if err != nil || strings.Count(nodes, "slave") != len(c.Nodes)-3 {
			return false
		}
	}
	return true
}

func port(addr string) string {
	_, p, _ := strings.Cut(addr, ":")
	return p
}

// KillMasterOf kills the master that holds key's hash slot (as a crash would) and waits until a replica of it
// has taken the slot over and every live node reports the cluster ok again; it returns the killed node. The
// cluster needs replicas (StartCluster with replicas >= 1).
func (c *Cluster) KillMasterOf(tb testing.TB, key string) *Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer cc.Close()
	m, err := cc.MasterForKey(ctx, key)
	if err != nil {
		tb.Fatalf("redistest: the master of %q: %v", key, err)
	}
	var dead *Server
	for _, n := range c.Nodes {
		if n.Addr == m.Options().Addr {
			dead = n
		}
	}
	if dead == nil {
		tb.Fatalf("redistest: the master %s is none of the nodes", m.Options().Addr)
	}
	dead.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c.failedOver(dead.Addr, key) {
			return dead
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("redistest: no replica took over the slot of %q from %s within 30s", key, dead.Addr)
	return nil
}

// failedOver reports whether a live node other than dead is the master of key's slot and every live node
// reports the cluster ok.
func (c *Cluster) failedOver(dead, key string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, n := range c.Nodes {
		if n.Addr == dead {
			continue
		}
		r := redis.NewClient(&redis.Options{Addr: n.Addr})
		info, err := r.ClusterInfo(ctx).Result()
		_ = r.Close()
		if err != nil || !strings.Contains(info, "cluster_state:ok") {
			return false
		}
	}
	var live []string
	for _, n := range c.Nodes {
		if n.Addr != dead {
			live = append(live, n.Addr)
		}
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: live})
	defer cc.Close()
	m, err := cc.MasterForKey(ctx, key)
	return err == nil && m.Options().Addr != dead
}
