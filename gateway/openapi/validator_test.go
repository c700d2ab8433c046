package openapi_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// TestValidatorRejects checks that the validator the tests rely on does reject what the document does not
// allow, so that a passing exchange means something.
func TestValidatorRejects(t *testing.T) {
	v := newValidator(t)
	for _, tc := range []struct {
		name, path string
		status     int
		body       string
	}{
		{"a string where an integer is", "/api2/demo/user/1", 200, `{"user": {"user_id": "one"}}`},
		{"an unknown element", "/api2/demo/re/1", 200, `{"requirement": {"fields": {"field": []}, "title": "x"}}`},
		{"a list that is not an array", "/api2/demo/re/1", 200, `{"requirement": {"fields": {"field": {"name": "id"}}}}`},
		{"a summary inside a record read", "/api2/demo/re/1", 200, `{"requirement": {"id": 1}}`},
		{"another root", "/api2/demo/re/1", 200, `{"feature": {"fields": {"field": []}}}`},
		{"an undocumented status", "/api2/demo/re/1", 418, `{"error": {"message": "teapot"}}`},
		{"an error without its element", "/api2/demo/re/1", 404, `{"message": "no"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", "http://gw.test"+tc.path, nil)
			req.SetBasicAuth("demo", "demo")
			req.Header.Set("Accept", "application/json")
			h := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {"1"}}
			res := &http.Response{StatusCode: tc.status, Header: h, Body: io.NopCloser(bytes.NewReader([]byte(tc.body))), Request: req}
			if ok, _ := v.ValidateHttpResponse(req, res); ok {
				t.Errorf("the validator accepts %d %s", tc.status, tc.body)
			}
		})
	}
}
