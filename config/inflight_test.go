package config

import (
	"strings"
	"testing"
)

// TestInflightPerAccountDefault checks upstream.max_inflight_per_account: unless set, a quarter of the
// connections per core it ends with (at least 4), wherever max_idle_conns was set; when set, its own value, 0
// (no cap) included; negative refused.
func TestInflightPerAccountDefault(t *testing.T) {
	tests := []struct {
		name    string
		file    string // passed with --config when not empty
		environ []string
		args    []string
		want    int
		wantErr string // "" = accepted
	}{
		{name: "default", want: 128},
		{name: "follows max_idle_conns in the file", file: "upstream:\n  max_idle_conns: 64\n", want: 16},
		{name: "follows max_idle_conns in the environment", environ: []string{"REQGATE_UPSTREAM_MAX_IDLE_CONNS=200"}, want: 50},
		{name: "follows max_idle_conns of a flag", args: []string{"--set", "upstream.max_idle_conns=8"}, want: 4},
		{name: "at least 4", args: []string{"--set", "upstream.max_idle_conns=1"}, want: 4},
		{name: "set in the file", file: "upstream:\n  max_idle_conns: 64\n  max_inflight_per_account: 40\n", want: 40},
		{name: "set in the environment", environ: []string{"REQGATE_UPSTREAM_MAX_INFLIGHT_PER_ACCOUNT=7"}, want: 7},
		{name: "no cap", args: []string{"--set", "upstream.max_inflight_per_account=0"}, want: 0},
		{name: "negative", args: []string{"--set", "upstream.max_inflight_per_account=-1"},
			wantErr: "flag --set upstream.max_inflight_per_account: upstream.max_inflight_per_account: must be between 0 (no cap) and 1000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if tt.file != "" {
				args = append([]string{"--config", writeFile(t, "r.yaml", tt.file)}, args...)
			}
			c, err := Load(RoleGateway, args, tt.environ)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load: %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := c.Upstream.MaxInflightPerAccount; got != tt.want {
				t.Errorf("upstream.max_inflight_per_account = %d, want %d", got, tt.want)
			}
		})
	}
}
