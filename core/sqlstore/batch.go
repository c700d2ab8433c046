package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Batch is a list of statements sent together (Querier.SendBatch); their results are read in order.
type Batch struct {
	items []batchItem
}

type batchItem struct {
	query string
	args  []any
}

// Queue adds a statement.
func (b *Batch) Queue(query string, args ...any) { b.items = append(b.items, batchItem{query, args}) }

// Len is the number of statements queued.
func (b *Batch) Len() int { return len(b.items) }

// BatchResults reads the results of a batch, one call per statement in the order queued.
type BatchResults interface {
	QueryRow() Row
	Query() (Rows, error)
	Exec() error
	// Close runs (or reads) what was not read and returns the first error.
	Close() error
}

// runBatch sends b and returns the first error of its statements.
func runBatch(ctx context.Context, q Querier, b *Batch) error {
	if b.Len() == 0 {
		return nil
	}
	br := q.SendBatch(ctx, b)
	var first error
	for range b.Len() {
		if err := br.Exec(); err != nil && first == nil {
			first = err
		}
	}
	if err := br.Close(); first == nil {
		first = err
	}
	return first
}

// SerialBatch runs the statements of b one by one on q as they are read: the batch of an engine that has
// no round trips to save. After a failed statement, the rest are not run and report that failure.
func SerialBatch(ctx context.Context, q Querier, b *Batch) BatchResults {
	return &serialBatch{ctx: ctx, q: q, items: b.items}
}

type serialBatch struct {
	ctx   context.Context
	q     Querier
	items []batchItem
	err   error
}

var errBatchDone = errors.New("batch: no more results")

func (s *serialBatch) next() (batchItem, error) {
	if s.err != nil {
		return batchItem{}, s.err
	}
	if len(s.items) == 0 {
		return batchItem{}, errBatchDone
	}
	it := s.items[0]
	s.items = s.items[1:]
	return it, nil
}

func (s *serialBatch) fail(err error) error {
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("batch: earlier statement: %w", err)
	}
	return err
}

func (s *serialBatch) QueryRow() Row {
	it, err := s.next()
	if err != nil {
		return errRow{err}
	}
	return &serialRow{s: s, row: s.q.QueryRow(s.ctx, it.query, it.args...)}
}

func (s *serialBatch) Query() (Rows, error) {
	it, err := s.next()
	if err != nil {
		return nil, err
	}
	rows, err := s.q.Query(s.ctx, it.query, it.args...)
	return rows, s.fail(err)
}

func (s *serialBatch) Exec() error {
	it, err := s.next()
	if err != nil {
		return err
	}
	return s.fail(s.q.Exec(s.ctx, it.query, it.args...))
}

func (s *serialBatch) Close() error {
	for len(s.items) > 0 && s.err == nil {
		s.Exec()
	}
	return s.err
}

// serialRow records a failed row (other than no row) as the batch's failure.
type serialRow struct {
	s   *serialBatch
	row Row
}

func (r *serialRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		r.s.fail(err)
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// Each calls fn for every statement queued, in order: how an engine that pipelines sends a batch.
func (b *Batch) Each(fn func(query string, args []any)) {
	for _, it := range b.items {
		fn(it.query, it.args)
	}
}
