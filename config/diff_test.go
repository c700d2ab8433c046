package config

import (
	"slices"
	"testing"
	"time"
)

func TestChanged(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Config)
		want   []string
	}{
		{"nothing", func(*Config) {}, nil},
		{"listen and log level", func(c *Config) { c.Listen = "127.0.0.1:1"; c.Log.Level = "debug" }, []string{"listen", "log.level"}},
		{"a list", func(c *Config) { c.CORS.AllowedOrigins = []string{"https://a.example"} }, []string{"cors.allowed_origins"}},
		{"a secret", func(c *Config) { c.Redis.URL = "redis://127.0.0.1:6379/1" }, []string{"redis.url"}},
		{"a policy", func(c *Config) { c.RateLimit.Policies[0].Limit = 5 }, []string{"ratelimit.policies"}},
		{"an override", func(c *Config) {
			c.RateLimit.Overrides = []Override{{APIKey: "k", Policy: "p", Limit: 1, Period: time.Second, Burst: 1}}
		}, []string{"ratelimit.overrides"}},
	}
	base := func() *Config {
		c := Default(RoleServe)
		c.RateLimit.Policies = []Policy{{Name: "p", Key: "api_key", Limit: 10, Period: time.Minute, Burst: 10}}
		return c
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := base()
			tt.change(b)
			if got := Changed(base(), b); !slices.Equal(got, tt.want) {
				t.Errorf("Changed = %v, want %v", got, tt.want)
			}
		})
	}
}
