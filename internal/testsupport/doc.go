// Package testsupport holds what the tests of several packages need alike and that belongs to no package under
// test: requests over real HTTP read whole, polling for a condition, a clock moved by hand, a log destination
// shared by goroutines, the account file of two organisations. It imports nothing of reqgate, so that any
// package's tests may use it, those inside package gateway or core/api included; production code never
// imports it.
package testsupport
