package accesslog

// Memo keeps the encoded text of the fields from method to upstream of a line, with the values it was encoded
// from. The requests of a keep-alive connection usually repeat them all (the same caller reading the same
// resource, answered the same way): a line whose values are the memo's copies the text instead of escaping
// each value again. The zero value is ready; a Memo serves one line at a time (one per connection, say).
type Memo struct {
	l             *Logger // the Logger that encoded text (its format)
	status, bytes int
	vals          []byte             // the string fields' values, one after another
	ends          [len(memoed{})]int // where each value ends in vals
	text          []byte             // the fields' encoded text, separators and keys included
	batch         batch              // the connection's lines waiting for the writer (Logger.Batch)
}

// maxMemo bounds the text a Memo keeps.
const maxMemo = 1 << 10

// memoed is the string fields a Memo compares, in the line's order.
type memoed [8]string

func (e *Entry) memoed() memoed {
	return memoed{e.Method, e.Path, e.Route, e.Account, e.User, e.IP, e.Cache, e.Core}
}

// append writes e's fields from method to upstream to b, from the memo when they are the memo's, and keeps
// them otherwise.
func (m *Memo) append(l *Logger, b []byte, e *Entry) []byte {
	vs := e.memoed()
	if m.l == l && m.status == e.Status && m.bytes == e.Bytes && m.holds(&vs) {
		return append(b, m.text...)
	}
	n := len(b)
	b = l.appendRepeated(b, e)
	if len(b)-n > maxMemo {
		// An outsize path (or user name): not kept, so a connection does not hold its buffers for good.
		m.l = nil
		return b
	}
	m.l, m.status, m.bytes = l, e.Status, e.Bytes
	m.text = append(m.text[:0], b[n:]...)
	m.vals = m.vals[:0]
	for i, v := range vs {
		m.vals = append(m.vals, v...)
		m.ends[i] = len(m.vals)
	}
	return b
}

// holds reports whether vs are the values the memo was made from.
func (m *Memo) holds(vs *memoed) bool {
	start := 0
	for i, v := range vs {
		if string(m.vals[start:m.ends[i]]) != v {
			return false
		}
		start = m.ends[i]
	}
	return true
}
