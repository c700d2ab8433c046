package config

import (
	"slices"
	"testing"
)

// TestRedisSentinelAndCluster loads a Sentinel group and a cluster from each source (file, environment,
// --set), with the nodes' password in redis.password_file, which needs no redis.url then.
func TestRedisSentinelAndCluster(t *testing.T) {
	pw := writeFile(t, "pw", "secret\n")
	tests := []struct {
		name                 string
		args, environ        []string
		master               string
		sentinels, clustered []string
	}{
		{name: "sentinel in the file",
			args: []string{"--config", writeFile(t, "r.yaml", "redis:\n  password_file: "+pw+"\n  sentinel:\n"+
				"    master: mymaster\n    addrs: [s0:26379, s1:26379]\n    password_file: "+pw+"\n")},
			master: "mymaster", sentinels: []string{"s0:26379", "s1:26379"}},
		{name: "sentinel in the environment",
			environ: []string{"REQGATE_REDIS_SENTINEL_MASTER=m", "REQGATE_REDIS_SENTINEL_ADDRS=s0:26379,s1:26379",
				"REQGATE_REDIS_PASSWORD_FILE=" + pw},
			master: "m", sentinels: []string{"s0:26379", "s1:26379"}},
		{name: "cluster with --set",
			args:      []string{"--set", "redis.cluster.addrs=c0:6379,c1:6379", "--redis-password-file", pw},
			clustered: []string{"c0:6379", "c1:6379"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, RoleGateway, append([]string{"--upstream", "http://core:8081"}, tt.args...), tt.environ)
			r := c.Redis
			if r.Sentinel.Master != tt.master || !slices.Equal(r.Sentinel.Addrs, tt.sentinels) ||
				!slices.Equal(r.Cluster.Addrs, tt.clustered) || !r.Configured() {
				t.Errorf("redis = %+v, want master %q, sentinels %q, cluster %q", r, tt.master, tt.sentinels, tt.clustered)
			}
		})
	}
}
