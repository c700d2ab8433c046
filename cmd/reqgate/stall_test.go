package main

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testbin"
)

// TestStalledGatewayDoesNotWriteLate runs one core and two gateways in front of it, and freezes gateway A with
// SIGSTOP. A write sent to A meanwhile times out at its client, which writes a newer value through gateway B
// and gets 200. When A resumes it must not forward the abandoned write: the newer, acknowledged value stays.
func TestStalledGatewayDoesNotWriteLate(t *testing.T) {
	coreAddr := testbin.FreeAddr(t)
	core := start(t, "core", "--listen", coreAddr, "--admin-listen", "off",
		"--db", filepath.Join(t.TempDir(), "core.db"), "--accounts", writeAccounts(t))
	waitReady(t, core, "http://"+coreAddr+"/readyz")
	procs, gateways := startGateways(t, 2, "--upstream", "http://"+coreAddr, "--set", "upstream.queue_timeout=1s")
	a, b := gateways[0], gateways[1]

	c := client()
	code, loc, err := call(c, http.MethodPost, b+"/api2/scale/re", titleBody("first"))
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, err)
	}
	rec := loc[strings.Index(loc, "/api2/"):]
	// A has proved the credential: after the freeze, the write's only exchange with the core would be the write.
	if code, _, err := call(c, http.MethodGet, a+rec, ""); err != nil || code != http.StatusOK {
		t.Fatalf("read through A: %d %v", code, err)
	}
	title := func() string { // as the core has it
		t.Helper()
		_, body := do(t, http.MethodGet, "http://"+coreAddr+rec, "writer", "")
		_, after, ok := strings.Cut(body, "<name>field_101</name>")
		_, after, ok2 := strings.Cut(after, "<value>")
		value, _, ok3 := strings.Cut(after, "</value>")
		if !ok || !ok2 || !ok3 {
			t.Fatalf("no title in\n%s", body)
		}
		return value
	}

	if err := procs[0].Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, procs[0].Cmd.Process.Pid)
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := procs[0].Cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
	}
	defer resume()
	// The caller gives up after a second and closes its connection, which the frozen gateway's kernel has
	// accepted, with the request, for the gateway to read when it resumes.
	impatient := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	_, _, err = call(impatient, http.MethodPut, a+rec, titleBody("abandoned"))
	var ne interface{ Timeout() bool }
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("write through the frozen gateway: %v, want a client timeout", err)
	}
	if code, _, err := call(c, http.MethodPut, b+rec, titleBody("newer")); err != nil || code != http.StatusOK {
		t.Fatalf("newer write through B: %d %v", code, err)
	}
	resume()

	// A reads the abandoned request when it resumes: it must say it did not forward it, and never apply it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got := title(); got != "newer" {
			t.Fatalf("title %q after gateway A resumed, want the acknowledged %q: the abandoned write landed late", got, "newer")
		}
		if strings.Contains(procs[0].Output.String(), "request not forwarded") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway A never reported the abandoned request as not forwarded:\n%s", procs[0].Output.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := title(); got != "newer" {
		t.Errorf("title %q, want %q", got, "newer")
	}
	// A serves again.
	if code, _, err := call(c, http.MethodPut, a+rec, titleBody("after")); err != nil || code != http.StatusOK {
		t.Errorf("write through A after it resumed: %d %v", code, err)
	}
}

// waitStopped waits until every thread of process pid has stopped (a signal is delivered asynchronously: on a
// loaded machine a thread of the process may still run for a while after kill returns).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			t.Fatal(err)
		}
		stopped := 0
		for _, task := range tasks {
			stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/stat")
			// The state follows the command name in parentheses: "pid (comm) T ...".
			if i := strings.LastIndexByte(string(stat), ')'); err == nil && i > 0 && i+2 < len(stat) && stat[i+2] == 'T' {
				stopped++
			}
		}
		if stopped == len(tasks) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not stop: %d of %d threads stopped", pid, stopped, len(tasks))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
