package exectool

import (
	"fmt"
	"strings"
	"sync"
)

// output is a command's stdout and stderr, capped: it keeps the first half
// of the cap and a ring of the last half, so a long run shows how it
// started and how it ended without holding everything. Safe for
// concurrent writes (os/exec copies stdout and stderr on two goroutines
// when they are not the same *os.File).
type output struct {
	mu       sync.Mutex
	headCap  int
	head     []byte
	tail     []byte // ring buffer of tailCap bytes
	tailCap  int
	tailPos  int
	tailFull bool
	total    int64
	readTo   int64 // total at the last poll
}

func newOutput(max int) *output {
	h := max / 2
	return &output{headCap: h, tailCap: max - h, tail: make([]byte, 0, max-h)}
}

// Write keeps p's bytes in the head until it is full, then in the tail.
func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	o.total += int64(n)
	if room := o.headCap - len(o.head); room > 0 {
		k := min(room, len(p))
		o.head = append(o.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if !o.tailFull && len(o.tail) < o.tailCap {
			k := min(o.tailCap-len(o.tail), len(p))
			o.tail = append(o.tail, p[:k]...)
			p = p[k:]
			if len(o.tail) == o.tailCap {
				o.tailFull = true
			}
			continue
		}
		k := copy(o.tail[o.tailPos:], p)
		o.tailPos = (o.tailPos + k) % o.tailCap
		p = p[k:]
	}
	return n, nil
}

// String returns what is kept, with a marker where bytes were dropped.
func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sinceLocked(0)
}

// Total is the number of bytes written.
func (o *output) Total() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total
}

// Since returns what is kept of the output written since the last call,
// and marks it read.
func (o *output) Since() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.sinceLocked(o.readTo)
	o.readTo = o.total
	return s
}

// sinceLocked is what is kept of the bytes from offset from on.
func (o *output) sinceLocked(from int64) string {
	tail := o.tail
	if o.tailFull && o.tailPos > 0 {
		tail = append(append(make([]byte, 0, len(tail)), o.tail[o.tailPos:]...), o.tail[:o.tailPos]...)
	}
	var out []byte
	headLen := int64(len(o.head))
	if from < headLen {
		out = append(out, o.head[from:]...)
	}
	// The bytes after the head went through the tail; the tail keeps the
	// last len(tail) of them.
	newTail := o.total - max(from, headLen)
	if newTail > int64(len(tail)) {
		out = fmt.Appendf(out, "\n[... %d bytes of output omitted ...]\n", newTail-int64(len(tail)))
		newTail = int64(len(tail))
	}
	if newTail > 0 {
		out = append(out, tail[int64(len(tail))-newTail:]...)
	}
	return strings.ToValidUTF8(string(out), "\uFFFD")
}
