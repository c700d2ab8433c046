package sqlstore

// SetImportChunk makes imports write n rows per CopyRows call until the returned function restores the
// chunk size.
func SetImportChunk(n int) (restore func()) {
	old := importChunk
	importChunk = n
	return func() { importChunk = old }
}
