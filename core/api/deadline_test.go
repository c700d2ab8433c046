package api_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// A request whose gateway says no time is left (Reqgate-Timeout: 0) is refused with 503 and Retry-After, and
// nothing of it is applied: the update's value, the delete's record, the create's record and even the id it
// would have taken stay as they were. A malformed value is refused with 400, also applying nothing; a budget
// with time left changes nothing about the answer.
func TestDeadlineRefusesSpentBudget(t *testing.T) {
	e := start(t, fixedClock())
	id := e.create("/api2", "re", body("requirement", "field_101", "Before"))
	rec := "/api2/acme/re/" + id
	for _, c := range []struct {
		name, method, path, body, budget string
		want                             int
	}{
		{"update, spent", "PUT", rec, body("requirement", "field_101", "Late"), "0", http.StatusServiceUnavailable},
		{"delete, spent", "DELETE", rec, "", "0", http.StatusServiceUnavailable},
		{"create, spent", "POST", "/api2/acme/re", body("requirement", "field_101", "Late"), "0", http.StatusServiceUnavailable},
		{"update, malformed", "PUT", rec, body("requirement", "field_101", "Late"), "1.5", http.StatusBadRequest},
		{"update, negative", "PUT", rec, body("requirement", "field_101", "Late"), "-1", http.StatusBadRequest},
		{"update, a unit", "PUT", rec, body("requirement", "field_101", "Late"), "30s", http.StatusBadRequest},
		{"create, too long", "POST", "/api2/acme/re", body("requirement", "field_101", "Late"), "1000000000", http.StatusBadRequest},
		{"read, spent", "GET", rec, "", "0", http.StatusServiceUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.on(t)
			res := e.must(req{Method: c.method, Path: c.path, Body: c.body, Header: map[string]string{"Reqgate-Timeout": c.budget}}, c.want)
			if !strings.Contains(res.Body, "<error>") {
				t.Errorf("body %q, want the <error> document", res.Body)
			}
			if c.want == http.StatusServiceUnavailable && res.Header.Get("Retry-After") == "" {
				t.Errorf("503 without Retry-After")
			}
			got := e.must(req{Path: rec}, http.StatusOK).Body
			if !strings.Contains(got, "<value>Before</value>") || strings.Contains(got, "Late") {
				t.Errorf("record changed by a refused request:\n%s", got)
			}
		})
	}
	// The refused creates took no id: the next create gets the one after the first record's.
	n, err := strconv.Atoi(id)
	if err != nil {
		t.Fatal(err)
	}
	if next := e.create("/api2", "re", body("requirement", "field_101", "Next")); next != strconv.Itoa(n+1) {
		t.Errorf("next record %s, want %d: a refused create was applied", next, n+1)
	}

	// Time left: applied as without the header.
	e.must(req{Method: "PUT", Path: rec, Body: body("requirement", "field_101", "After"),
		Header: map[string]string{"Reqgate-Timeout": "60000"}}, http.StatusOK)
	if got := e.must(req{Path: rec}, http.StatusOK).Body; !strings.Contains(got, "<value>After</value>") {
		t.Errorf("update with time left not applied:\n%s", got)
	}
}
