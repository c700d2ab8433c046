package translate

import "github.com/clbanning/mxj/v2"

// mxj is only a reference of this package's benchmarks (bench_test.go), so it is a test dependency and the
// binary does not link it. It keeps its settings in process-wide variables, set here for the benchmarks:
// escape & < > " ' when writing XML (mxj's default writes them raw, which is invalid XML), and keep JSON
// numbers exact (json.Number instead of float64, so 1000000 does not become 1e+06).
func init() {
	mxj.XMLEscapeChars(true)
	mxj.JsonUseNumber = true
}
