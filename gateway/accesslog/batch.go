package accesslog

import (
	"sync"
	"time"

	"github.com/reqgate/reqgate/internal/tick"
)

// Batching. The process's log writer takes a lock for each Write and appends to one buffer; a gateway serving
// on several CPUs would move that lock's cache line, and the buffer's, between the CPUs on every request. A
// Logger with Batch on gathers the lines of each connection (those logged with its Memo) in the Memo and writes
// them together: as soon as batchBytes have gathered, and otherwise within the batch interval, by a goroutine
// of the Logger. The lines of one connection keep their order; lines of different connections may reach the
// writer out of order by up to the interval (each line carries its time).

// batchBytes is how much of a connection's lines gather before they are written at once.
const batchBytes = 4 << 10

// batch is a connection's lines waiting for the writer.
type batch struct {
	mu     sync.Mutex
	b      []byte
	queued bool // in the Logger's queue, for the next flush
}

// Batch makes the Logger gather each Memo's lines and write them at the latest every interval (see above),
// until Close. Call it once, before the Logger is used.
func (l *Logger) Batch(interval time.Duration) {
	l.stop, l.stopped = make(chan struct{}), make(chan struct{})
	l.batching.Store(true)
	go func() {
		defer close(l.stopped)
		tick.Every(l.stop, interval, l.Flush)
		l.Flush()
	}()
}

// Close writes what is gathered and ends the batching (Batch): the Logger then writes each line at once. It
// does nothing for a Logger without Batch.
func (l *Logger) Close() {
	if l.stop == nil {
		return
	}
	l.batching.Store(false)
	l.closeOnce.Do(func() { close(l.stop) })
	<-l.stopped
}

// Flush writes every connection's gathered lines. A connection with few lines since the last flush lets its
// buffer go, so that quiet connections hold no memory for the log; a busy one keeps it.
func (l *Logger) Flush() {
	l.qmu.Lock()
	q := l.queue
	l.queue = nil
	l.qmu.Unlock()
	for _, m := range q {
		m.batch.mu.Lock()
		if len(m.batch.b) > 0 {
			_, _ = l.w.Write(m.batch.b)
		}
		if len(m.batch.b) < batchBytes/4 {
			m.batch.b = nil
		} else {
			m.batch.b = m.batch.b[:0]
		}
		m.batch.queued = false
		m.batch.mu.Unlock()
	}
}

// logBatched appends e's line to m's batch and writes the batch once it is full; otherwise it makes sure the
// next Flush writes it. It reports false, having done nothing, when the Logger is not batching.
func (l *Logger) logBatched(t time.Time, e *Entry, m *Memo) (bool, error) {
	if !l.batching.Load() {
		return false, nil
	}
	m.batch.mu.Lock()
	defer m.batch.mu.Unlock()
	m.batch.b = l.appendWith(m.batch.b, t, e, m)
	if len(m.batch.b) >= batchBytes || !l.batching.Load() {
		// Full, or Close began meanwhile: its last Flush may have passed this connection already.
		_, err := l.w.Write(m.batch.b)
		m.batch.b = m.batch.b[:0]
		return true, err
	}
	if !m.batch.queued {
		m.batch.queued = true
		l.qmu.Lock()
		l.queue = append(l.queue, m)
		l.qmu.Unlock()
	}
	return true, nil
}
