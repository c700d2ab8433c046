package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayering checks the two rules that keep the core and the gateway two programs: the core's packages
// depend on nothing of the gateway's trees (cache, translate, ratelimit, gateway), and the gateway's trees
// on nothing of core. What both sides share lives under internal/ (or in config, which imports neither), so
// that either may be built, reviewed and changed without the other.
func TestLayering(t *testing.T) {
	const module = "github.com/reqgate/reqgate/"
	gatewaySide := []string{"cache", "translate", "ratelimit", "gateway"}
	tests := []struct {
		name      string
		packages  []string // patterns, relative to the module's root
		forbidden []string // trees, relative to the module
	}{
		{"core", []string{"./core/..."}, gatewaySide},
		{"gateway", []string{"./cache/...", "./translate/...", "./ratelimit/...", "./gateway/..."}, []string{"core"}},
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// -deps without -test: what the packages themselves link, test support packages (coretest,
			// gatewaytest) included, since other trees' tests import them.
			cmd := exec.Command("go", append([]string{"list", "-deps"}, tt.packages...)...)
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps %v: %v", tt.packages, err)
			}
			for _, dep := range strings.Fields(string(out)) {
				rel, ok := strings.CutPrefix(dep, module)
				if !ok {
					continue
				}
				for _, tree := range tt.forbidden {
					if rel == tree || strings.HasPrefix(rel, tree+"/") {
						t.Errorf("%s depends on %s", strings.Join(tt.packages, " "), dep)
					}
				}
			}
		})
	}
}
