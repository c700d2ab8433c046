package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMakeDeps checks the first command of a fresh machine: `make test` runs `make deps` before anything else,
// and .ci/deps, run without root on a machine that lacks redis-server, fails and prints the exact command that
// installs it. The missing program is simulated by a PATH holding only the shell's tools; a root test process
// runs the script as the nobody user.
func TestMakeDeps(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("make", "--no-print-directory", "-C", root, "-n", "test").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n test: %v\n%s", err, out)
	}
	if first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n"); !strings.Contains(first, ".ci/deps") {
		t.Errorf("make test does not start with make deps; its first command is %q", first)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ci), "apt-get") || !strings.Contains(string(ci), "make test") {
		t.Errorf(".ci/run should only call make test (which installs through make deps):\n%s", ci)
	}

	bin, err := os.MkdirTemp("", "reqgate-deps-path")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"bash", "id", "ls"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(bin, "bash"), filepath.Join(root, ".ci", "deps"))
	cmd.Env = []string{"PATH=" + bin, "REQGATE_PG_BIN="}
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err = cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 {
		t.Fatalf(".ci/deps without redis-server: exit %d (%v), want 1:\n%s", code, err, out)
	}
	if !strings.Contains(string(out), "apt-get install -y --no-install-recommends redis-server") {
		t.Errorf(".ci/deps does not print the command that installs redis-server:\n%s", out)
	}
}
