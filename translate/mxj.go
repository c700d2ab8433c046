package translate

import "github.com/clbanning/mxj/v2"

// mxj keeps its settings in process-wide variables, so they are set once here, at start, for every user of
// mxj in the process (the reference benchmarks of this package among them): escape & < > " ' when writing
// XML (mxj's default writes them raw, which is invalid XML and an injection risk), keep JSON numbers exact
// (json.Number instead of float64, so 1000000 does not become 1e+06).
func init() {
	mxj.XMLEscapeChars(true)
	mxj.JsonUseNumber = true
}
