// Package translate converts the documents of the XML interface (docs/api.md) to JSON and back, for the
// gateway's JSON front. The mapping is documented, with an example of every resource, in docs/json.md.
//
// The mapping is direct and invertible: the root element is the single top-level key, child elements are
// keys, attributes are "@name" keys, and the text of an element that has attributes is "#text". What the
// generic rules cannot know comes from one table of the interface (schema.go): which children repeat
// (always arrays, even with zero or one item), which texts are integers (JSON numbers, only when written as
// plain decimal integers, so "02134" stays a string), which values are null when empty (those whose set form
// is a number or an object, so that no value's JSON type depends on the data), which elements hold only
// elements (their whitespace is layout), and the order of children (JSON key order, and XML element order for request bodies built
// from a client's JSON, whose keys may come in any order).
//
// Both directions are implemented here rather than with github.com/clbanning/mxj/v2, whose Map form cannot
// give these guarantees: it loses the order of children (Map.Xml sorts them alphabetically, and MapSeq.Xml
// panics on plain string leaves and is quadratic in v2.7.0), makes a list of one item an object, and its
// casts turn "02134" into 2134. The codec here also takes 3 to 8 times less CPU per document
// (docs/performance.md). mxj remains only as a reference of the benchmarks, a test dependency.
//
// Limits: documents up to MaxInput bytes and MaxDepth levels; XML input must be UTF-8 without DOCTYPE
// (no entity expansion). Errors: *XMLError (XML that cannot be read), *SyntaxError (malformed JSON, with
// line and column), *StructureError (JSON without an XML form).
package translate
