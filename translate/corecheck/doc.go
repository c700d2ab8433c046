// Package corecheck tests package translate against the real core: every resource of the demo account,
// read from the core's XML API on a loopback port (core/coretest), must translate to JSON and back to the
// same document in the core's own element order, and a record written as JSON must be accepted. The tests
// live apart from package translate so that its own tests never depend on the core building.
package corecheck
