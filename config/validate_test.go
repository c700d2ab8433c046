package config

import "testing"

func TestSameListener(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{":8080", ":8080", true},
		{"127.0.0.1:9090", ":9090", true},
		{"0.0.0.0:9090", "127.0.0.1:9090", true},
		{"[::]:9090", "[::1]:9090", true},
		{"127.0.0.1:9090", "10.0.0.1:9090", false},
		{"127.0.0.1:9090", "127.0.0.1:8080", false},
		{":0", ":0", false},
		{"bad", ":1", false},
	}
	for _, tt := range tests {
		if got := sameListener(tt.a, tt.b); got != tt.want {
			t.Errorf("sameListener(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestValidDefaults checks that every role's defaults pass Validate and survive a Load with nothing given.
func TestValidDefaults(t *testing.T) {
	for _, role := range allRoles {
		if err := Default(role).Validate(); err != nil {
			t.Errorf("Default(%q).Validate() = %v", role, err)
		}
		c := mustLoad(t, role, nil, nil)
		if len(c.Warnings) != 0 {
			t.Errorf("Load(%q) warned: %q", role, c.Warnings)
		}
	}
	if err := Default("proxy").Validate(); err == nil {
		t.Error("Validate accepted the role proxy")
	}
}

// TestValidateWithoutSources checks a Config built in code: refusals carry the path and reason, no source.
func TestValidateWithoutSources(t *testing.T) {
	c := Default(RoleGateway)
	c.RateLimit.Policies = []Policy{{Name: "p", Key: "api_key", Limit: 10, Period: 0, Burst: 0}}
	got := errString(c.Validate())
	want := "ratelimit.policies[0].period: must be > 0 (and at most 8784h)\nratelimit.policies[0].burst: must be >= 1 (and at most 1000000000)"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
