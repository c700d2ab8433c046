package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/internal/race"
	"github.com/reqgate/reqgate/translate"
)

// The memory a full cache holds, against its budget: the cache is filled with entries made the way the gateway
// makes them (gateway/read.go entryOf, gateway/representation.go prepareEntry, gateway/json.go jsonEntry):
// the body copied from the upstream's buffer, the headers as strings, the entity tags, the gzip and brotli
// forms where they pay, and for some reads the JSON form as an entry of its own.

// entryMaker makes the entries of a gateway's reads: record-like XML documents of mixed sizes, a third of them
// also read as JSON.
type entryMaker struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	words []string
	c     *Cache
	size  func(*entryMaker) int // draws the size of a body
}

func newEntryMaker(c *Cache, seed uint64, size func(*entryMaker) int) *entryMaker {
	m := &entryMaker{rng: rand.New(rand.NewPCG(seed, 1)), c: c, size: size}
	// A vocabulary of requirement-like prose: compressible as real text is, not as a repeated string.
	// Words are drawn by Zipf's law, as in prose.
	for range 5000 {
		w := make([]byte, 2+m.rng.IntN(9))
		for j := range w {
			w[j] = byte('a' + m.rng.IntN(26))
		}
		m.words = append(m.words, string(w))
	}
	m.zipf = rand.NewZipf(m.rng, 1.1, 1, uint64(len(m.words)-1))
	return m
}

// mixedSizes draws a body size: mostly single records (120 B-1.4 KB), some field lists and searches up to 5 KB,
// a few long views up to 25 KB. 100k reads of them fill the default budget.
func mixedSizes(m *entryMaker) int {
	switch p := m.rng.IntN(100); {
	case p < 50:
		return 120 + m.rng.IntN(400)
	case p < 90:
		return 520 + m.rng.IntN(880)
	case p < 99:
		return 1400 + m.rng.IntN(3600)
	default:
		return 5000 + m.rng.IntN(20000)
	}
}

// smallSizes draws the size of a short record or an error body (100-500 B), too small to be compressed: the
// entries whose cost is mostly not their body.
func smallSizes(m *entryMaker) int { return 100 + m.rng.IntN(400) }

// xml is a record-like XML document of about n bytes.
func (m *entryMaker) xml(id, n int) []byte {
	b := make([]byte, 0, n+256)
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<requirement><id>"...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, "</id>"...)
	for f := 0; len(b) < n; f++ {
		b = append(b, `<field id="`...)
		b = strconv.AppendInt(b, int64(f), 10)
		b = append(b, `" name="Field `...)
		b = strconv.AppendInt(b, int64(f), 10)
		b = append(b, `">`...)
		for range 4 + m.rng.IntN(40) {
			b = append(b, m.words[m.zipf.Uint64()]...)
			b = append(b, ' ')
		}
		b = append(b, "</field>"...)
	}
	return append(b, "</requirement>"...)
}

// read makes the entries of read i: its XML entry and, for a third of the reads, its JSON entry, each with the
// key the gateway would store it under.
func (m *entryMaker) read(tb testing.TB, i int, add func(key string, e *Entry)) {
	upstream := m.xml(i, m.size(m))
	id := strconv.Itoa(i)
	sc := Scope{Reads: ReadsRecord, Kind: "re", ID: id}
	account := "acct" + strconv.Itoa(i%50)
	path := "/api2/" + account + "/re/" + id

	// entryOf: the body copied from fasthttp's buffer, each header copied as a string.
	e := &Entry{Status: 200, Body: append(make([]byte, 0, len(upstream)), upstream...)}
	sum := sha256.Sum256(upstream)
	for _, h := range [][2][]byte{
		{[]byte("Content-Type"), []byte("application/xml; charset=utf-8")},
		{[]byte("Etag"), []byte(`"` + hex.EncodeToString(sum[:12]) + `"`)},
	} {
		e.Header = append(e.Header, Header{Key: string(h[0]), Value: string(h[1])})
	}
	prepare(e)
	add(m.c.Key(sc, account, "", 2, path, "", "xml"), e)
	if i%3 != 0 {
		return
	}

	// jsonEntry: the headers copied, the tag suffixed, the body translated.
	je := &Entry{Status: e.Status, Stored: e.Stored, Header: make([]Header, 0, len(e.Header))}
	for _, h := range e.Header {
		switch h.Key {
		case "Content-Type":
			h.Value = "application/json"
		case "Etag":
			h.Value = h.Value[:len(h.Value)-1] + `-json"`
		}
		je.Header = append(je.Header, h)
	}
	js, err := translate.XMLToJSON(e.Body)
	if err != nil {
		tb.Fatal(err)
	}
	je.Body = js
	prepare(je)
	add(m.c.Key(sc, account, "", 2, path, "", "json"), je)
}

// prepare is the gateway's prepareEntry: the tag (the core's), the compressed forms where they save a tenth.
func prepare(e *Entry) {
	for _, h := range e.Header {
		if h.Key == "Etag" {
			e.ETag = h.Value
		}
	}
	if len(e.Body) < 512 {
		return
	}
	if gz := fasthttp.AppendGzipBytesLevel(nil, e.Body, fasthttp.CompressBestSpeed); len(gz) < len(e.Body)*9/10 {
		e.Gzip, e.GzipETag = gz, e.ETag[:len(e.ETag)-1]+`-gzip"`
	}
	if br := fasthttp.AppendBrotliBytesLevel(nil, e.Body, fasthttp.CompressBrotliDefaultCompression); len(br) < len(e.Body)*9/10 {
		e.Brotli, e.BrotliETag = br, e.ETag[:len(e.ETag)-1]+`-br"`
	}
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// fill fills a cache of maxBytes with reads of the given sizes until it has stored at least entries entries and
// has been offered more than its budget, and returns the heap it holds (the heap in use with the cache, less
// the heap in use before New), the entries it holds and the bytes it counts.
func fill(tb testing.TB, maxBytes int64, entries int, sizes func(*entryMaker) int) (heap uint64, held int, counted int64) {
	before := heapInUse()
	c, err := New(Options{MaxBytes: maxBytes, TTL: time.Hour})
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	m := newEntryMaker(c, 1, sizes)
	var keys []string
	stored, offered := 0, int64(0)
	add := func(key string, e *Entry) {
		offered += e.size()
		if err := c.Set(key, e); err == nil {
			stored++
		}
		keys = append(keys, key)
	}
	for i := 0; stored < entries || offered < maxBytes*11/10; i++ {
		m.read(tb, i, add)
	}
	c.Wait()
	for _, k := range keys {
		if _, ok := c.store.Get(k); ok {
			held++
		}
	}
	keys = nil
	after := heapInUse()
	runtime.KeepAlive(c)
	return after - before, held, c.bytes()
}

// TestMemoryWithinBudget: a full cache holds at most 1.25 times cache.max_bytes on the heap, whatever the size
// of its entries, so a deployment can size its memory limit from the budget. (The 256 KiB of slack is the
// measurement's: other goroutines of the test binary.)
func TestMemoryWithinBudget(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes compressing thousands of bodies take a minute (make unit runs this without it)")
	}
	const maxBytes = 8 << 20
	for _, tc := range []struct {
		name  string
		sizes func(*entryMaker) int
	}{
		{"mixed sizes and encodings", mixedSizes},
		{"small entries", smallSizes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			heap, held, counted := fill(t, maxBytes, 0, tc.sizes)
			t.Logf("%d entries: heap %d bytes (%.3f of max_bytes), counted %d", held, heap,
				float64(heap)/maxBytes, counted)
			if limit := uint64(maxBytes*5/4 + 256<<10); heap > limit {
				t.Errorf("a full cache of %d bytes holds %d bytes of heap (%.2fx), over %d", maxBytes, heap,
					float64(heap)/maxBytes, limit)
			}
		})
	}
}

// BenchmarkCacheMemory fills the default cache (cache.max_bytes, 256 MiB) with 100k entries or more of mixed
// sizes and encodings and reports the live heap it causes per byte of its budget (heap/max_bytes, the target
// being at most 1.25), the entries it holds and the heap per entry.
func BenchmarkCacheMemory(b *testing.B) {
	maxBytes := configured().MaxBytes
	for range b.N {
		heap, held, counted := fill(b, maxBytes, 100_000, mixedSizes)
		b.ReportMetric(float64(heap)/float64(maxBytes), "heap/max_bytes")
		b.ReportMetric(float64(held), "entries")
		b.ReportMetric(float64(heap)/float64(held), "heap-B/entry")
		b.ReportMetric(float64(counted)/float64(maxBytes), "counted/max_bytes")
	}
}
