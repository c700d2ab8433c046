package ratelimit

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/config/configtest"
)

// TestOptionsFrom checks that every configuration key of the limiter reaches it through OptionsFrom, the one
// mapping of the binary and of the tests: with every key set, a field left zero is a key the limiter would
// silently ignore. The fields that are no configuration key are named here.
func TestOptionsFrom(t *testing.T) {
	cfg := config.Default(config.RoleGateway)
	cfg.Redis.Namespace = "alpha"
	cfg.RateLimit.Policies = []config.Policy{{Name: "p", Key: KeyIP, Limit: 10, Period: time.Second, Burst: 5,
		MaxDelay: time.Second, Algorithm: AlgorithmWindow, Block: time.Minute}}
	cfg.RateLimit.Overrides = []config.Override{{APIKey: "demo", Policy: "p", Limit: 20, Period: time.Minute, Burst: 2}}
	o := OptionsFrom(cfg)
	unset := configtest.ZeroFields(o, "Redis", "Logger", "Now", "NoAutoPipeline", "NoRejectCache", "NoCredits")
	if len(o.Policies) != 1 || len(o.Overrides) != 1 {
		t.Fatalf("Policies %v, Overrides %v: want one each", o.Policies, o.Overrides)
	}
	unset = append(unset, configtest.ZeroFields(o.Policies[0])...)
	unset = append(unset, configtest.ZeroFields(o.Overrides[0])...)
	if len(unset) > 0 {
		t.Errorf("OptionsFrom leaves %v zero", unset)
	}
}

// TestRedisOptionsFrom checks the one rule of the Redis client's timeouts: those redis.url sets win, redis.timeout
// is the value of the others, for the limiter, the invalidation bus and the core's publisher alike.
func TestRedisOptionsFrom(t *testing.T) {
	tests := []struct {
		name              string
		url               string
		dial, read, write time.Duration
	}{
		{"none in the URL", "redis://127.0.0.1:6379/0", 2 * time.Second, 2 * time.Second, 2 * time.Second},
		{"read and write", "redis://127.0.0.1:6379/0?read_timeout=300ms&write_timeout=5s", 2 * time.Second,
			300 * time.Millisecond, 5 * time.Second},
		{"dial above redis.timeout", "redis://127.0.0.1:6379/0?dial_timeout=10s", 10 * time.Second, 2 * time.Second,
			2 * time.Second},
		{"read none", "redis://127.0.0.1:6379/0?read_timeout=0", 2 * time.Second, -1, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default(config.RoleGateway)
			cfg.Redis.URL, cfg.Redis.Timeout = tt.url, 2*time.Second
			o, err := RedisOptionsFrom(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if o.DialTimeout != tt.dial || o.ReadTimeout != tt.read || o.WriteTimeout != tt.write {
				t.Errorf("dial, read, write timeouts = %v, %v, %v; want %v, %v, %v", o.DialTimeout, o.ReadTimeout,
					o.WriteTimeout, tt.dial, tt.read, tt.write)
			}
			if !o.ContextTimeoutEnabled {
				t.Error("ContextTimeoutEnabled is off: the limiter's deadlines would not reach the socket")
			}
		})
	}
	t.Run("password file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "pw")
		if err := os.WriteFile(file, []byte("s3cret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := config.Default(config.RoleGateway)
		cfg.Redis.URL, cfg.Redis.PasswordFile = "redis://127.0.0.1:6379/0", file
		o, err := RedisOptionsFrom(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if o.Password != "s3cret" {
			t.Errorf("Password = %q, want the file's", o.Password)
		}
	})
}
