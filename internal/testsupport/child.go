package testsupport

import (
	"io"
	"os"
	"os/exec"
	"testing"
)

// Child starts this test binary again, running only the test named test, with env ("KEY=value", which tells
// that test it is the child) added to the environment and its stderr the test's. It returns the process and
// its stdout, the pipe the child reports on. A test that kills the child waits for it (cmd.Wait); a child still
// running when the test ends is killed then. It is how a test kills a process of its own code mid-write (kill -9)
// without building a binary.
func Child(tb testing.TB, test string, env ...string) (*exec.Cmd, io.ReadCloser) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start child %s: %v", test, err)
	}
	tb.Cleanup(func() {
		if cmd.ProcessState == nil { // not waited for by the test
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, out
}
