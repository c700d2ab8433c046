// Package client is a Go client generated from the OpenAPI document (gateway/openapi) with oapi-codegen, for
// the tests of that package only: TestGeneratedClient reads and writes records through it on a real gateway,
// and TestGeneratedClientUpToDate regenerates it and compares. No program links it.
//
// Regenerate with `go generate ./gateway/openapi/internal/client` after the document changes. The generator is
// run from the Go module proxy at a pinned version, outside the main module's go.mod.
package client

//go:generate sh -c "go run ../../../../cmd/reqgate openapi > openapi.json && go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml -o client.gen.go openapi.json; s=$?; rm -f openapi.json; exit $s"
