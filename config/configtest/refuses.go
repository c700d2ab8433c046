package configtest

import (
	"strings"
	"testing"
)

// Edit is one change to a package's configured options and what its New must answer: WantErr "" accepted,
// else refused with an error containing WantErr.
type Edit[O any] struct {
	Name    string
	Change  func(*O)
	WantErr string
}

// CheckNew runs each edit as a subtest: the options configured returns, changed by the edit, are given to
// build (the package's New, releasing what it made when it succeeds), which must accept or refuse them as the
// edit says. It is the test that a package refuses what no configuration can mean instead of putting a default
// in its place.
func CheckNew[O any](t *testing.T, configured func() O, build func(O) error, edits []Edit[O]) {
	t.Helper()
	for _, e := range edits {
		t.Run(e.Name, func(t *testing.T) {
			o := configured()
			e.Change(&o)
			err := build(o)
			switch {
			case e.WantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case e.WantErr != "" && (err == nil || !strings.Contains(err.Error(), e.WantErr)):
				t.Fatalf("New: %v, want an error with %q", err, e.WantErr)
			}
		})
	}
}

// Accepted is an edit New must accept.
func Accepted[O any](name string, change func(*O)) Edit[O] {
	return Edit[O]{Name: name, Change: change}
}

// Refused is an edit New must refuse with an error containing wantErr.
func Refused[O any](name string, change func(*O), wantErr string) Edit[O] {
	return Edit[O]{Name: name, Change: change, WantErr: wantErr}
}
