package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/reqgate/reqgate/internal/testbin"
)

// TestVersion runs `reqgate version` and `reqgate --version` on the test's binary (a plain go build, which
// records the module version and, where it finds a .git directory, the revision) and on one stamped the way the
// Makefile and the Dockerfile stamp a release, and reads reqgate_build_info from a running stamped process.
func TestVersion(t *testing.T) {
	stamped := filepath.Join(t.TempDir(), "reqgate")
	out, err := exec.Command("go", "build", "-o", stamped, "-ldflags", "-X main.version=9.8.7 -X main.vcsRevision=abc123 "+
		"-X main.vcsTime=2026-01-02T03:04:05Z -X main.vcsModified=true", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build with -ldflags: %v\n%s", err, out)
	}
	goLine := "  go:       " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"

	tests := []struct {
		name, bin, arg string
		want           *regexp.Regexp
	}{
		{"command", testbin.Binary(t), "version",
			regexp.MustCompile(`^reqgate (v\S+|\(devel\))\n  revision: \S+( \(modified\))?\n  time:     \S+\n` + regexp.QuoteMeta(goLine) + `$`)},
		{"flag", testbin.Binary(t), "--version",
			regexp.MustCompile(`^reqgate (v\S+|\(devel\))\n  revision: `)},
		{"stamped", stamped, "version",
			regexp.MustCompile(`^reqgate 9\.8\.7\n  revision: abc123 \(modified\)\n  time:     2026-01-02T03:04:05Z\n` + regexp.QuoteMeta(goLine) + `$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Command(tt.bin, tt.arg).CombinedOutput()
			if err != nil {
				t.Fatalf("reqgate %s: %v\n%s", tt.arg, err, out)
			}
			if !tt.want.Match(out) {
				t.Errorf("reqgate %s printed\n%s\nwant a match of %s", tt.arg, out, tt.want)
			}
		})
	}

	t.Run("metric", func(t *testing.T) {
		admin := testbin.FreeAddr(t)
		cmd := exec.Command(stamped, "gateway", "--listen", testbin.FreeAddr(t), "--admin-listen", admin, "--upstream", "http://"+testbin.FreeAddr(t))
		p := testbin.Run(t, cmd)
		waitReady(t, p, "http://"+admin+"/healthz")
		_, body := do(t, http.MethodGet, "http://"+admin+"/metrics", "", "")
		want := `reqgate_build_info{version="9.8.7",revision="abc123",goversion="` + runtime.Version() + `"} 1`
		if !strings.Contains(body, "\n"+want+"\n") {
			t.Errorf("/metrics lacks %s; it has:\n%s", want, grepLines(body, "reqgate_build_info"))
		}
	})
}

// TestReleaseVersionsAgree holds the release version in one place: the VERSION file, which the Makefile stamps
// into the binary, must be the Dockerfile's default VERSION (stamped into the image and its OCI labels) and the
// chart's appVersion, which is the image tag the chart deploys unless image.tag says otherwise.
func TestReleaseVersionsAgree(t *testing.T) {
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	version := strings.TrimSpace(read("VERSION"))
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(version) {
		t.Fatalf("VERSION %q is not a semantic version", version)
	}

	var chart struct {
		AppVersion string `yaml:"appVersion"`
	}
	if err := yaml.Unmarshal([]byte(read("charts/reqgate/Chart.yaml")), &chart); err != nil {
		t.Fatal(err)
	}
	var values struct {
		Image struct {
			Tag string `yaml:"tag"`
		} `yaml:"image"`
	}
	if err := yaml.Unmarshal([]byte(read("charts/reqgate/values.yaml")), &values); err != nil {
		t.Fatal(err)
	}
	dockerfile := read("Dockerfile")
	m := regexp.MustCompile(`(?m)^ARG VERSION=(\S+)$`).FindAllStringSubmatch(dockerfile, -1)

	if chart.AppVersion != version {
		t.Errorf("charts/reqgate/Chart.yaml appVersion %q, VERSION %q", chart.AppVersion, version)
	}
	if values.Image.Tag != "" && values.Image.Tag != version {
		t.Errorf("charts/reqgate/values.yaml image.tag %q: leave it empty (appVersion) or set VERSION %q", values.Image.Tag, version)
	}
	if len(m) != 1 || m[0][1] != version {
		t.Errorf("Dockerfile: want one ARG VERSION=%s, found %v", version, m)
	}
	for _, want := range []string{"-X main.version=${VERSION}", "-X main.vcsRevision=${REVISION}",
		`org.opencontainers.image.version="${VERSION}"`, `org.opencontainers.image.revision="${REVISION}"`} {
		if !strings.Contains(dockerfile, want) {
			t.Errorf("Dockerfile lacks %s", want)
		}
	}
}

// grepLines returns the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
