package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/gateway/openapi"
)

// TestOpenAPICommand checks that `reqgate openapi` prints the document the gateway serves, and refuses
// arguments.
func TestOpenAPICommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"prints the document", []string{"openapi"}, 0},
		{"refuses arguments", []string{"openapi", "--yaml"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut strings.Builder
			if code := run(t.Context(), tc.args, nil, &out, &errOut); code != tc.code {
				t.Fatalf("exit code %d, want %d; stderr %q", code, tc.code, errOut.String())
			}
			if tc.code != 0 {
				if out.Len() != 0 || errOut.Len() == 0 {
					t.Errorf("stdout %d bytes, stderr %q: want no output and an explanation", out.Len(), errOut.String())
				}
				return
			}
			if !bytes.Equal([]byte(out.String()), openapi.JSON()) {
				t.Error("output differs from openapi.JSON()")
			}
			var doc struct{ OpenAPI string }
			if err := json.Unmarshal([]byte(out.String()), &doc); err != nil || doc.OpenAPI != "3.1.0" {
				t.Errorf("openapi=%q err=%v, want a 3.1.0 document", doc.OpenAPI, err)
			}
		})
	}
}
