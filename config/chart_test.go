package config

import (
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestChartValues checks that the `config` key of the Helm chart's values files (rendered verbatim into the
// pods' --config file) passes CheckFile, so a chart edit cannot ship a config the pods refuse at start.
func TestChartValues(t *testing.T) {
	for _, name := range []string{"values.yaml", "ci/production-values.yaml"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "charts", "reqgate", name))
			if err != nil {
				t.Fatalf("read chart values: %v", err)
			}
			var values struct {
				Config yaml.Node `yaml:"config"`
			}
			if err := yaml.Unmarshal(data, &values); err != nil {
				t.Fatalf("parse %s: %v", name, err)
			}
			if values.Config.Kind == 0 {
				t.Fatalf("%s has no config key", name)
			}
			out, err := yaml.Marshal(&values.Config)
			if err != nil {
				t.Fatal(err)
			}
			path := writeFile(t, "config.yaml", string(out))
			if err := CheckFile(path); err != nil {
				t.Fatalf("the chart's config is refused:\n%v\n---\n%s", err, out)
			}
		})
	}
}
