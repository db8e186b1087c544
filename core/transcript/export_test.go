package transcript

// SetReadChunk sets the size of the read chunk for a test and returns the
// function that restores it. Tests that call it must not run in parallel.
func SetReadChunk(n int64) (restore func()) {
	old := readChunk
	readChunk = n
	return func() { readChunk = old }
}

// Handle is handle, for the fault tests.
type Handle = handle

// SwapHandle replaces f's file handle and returns the old one.
func (f *File) SwapHandle(h Handle) Handle {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.fd
	f.fd = h
	return old
}

// CharCount is charCount, for its test.
var CharCount = charCount
