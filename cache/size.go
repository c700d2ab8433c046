package cache

import (
	"slices"
	"unsafe"
)

// What the cache costs in memory, so that cache.max_bytes bounds the heap the cache causes, not only the bytes
// of the bodies it holds. An entry costs its Entry, its header slice and strings, its body and compressed forms
// as the allocator rounds them, and the store's bookkeeping of an item; the store costs fixed tables made by New
// (ristretto's frequency sketch and doorkeeper, its buffers, the table of record generations), which come out of
// the budget before any entry. The key costs nothing: the store keeps its two hashes, counted in the item.

// itemOverhead is the store's bookkeeping of one item, measured (about 120-170 bytes as its maps grow, on
// go1.26 with ristretto v2.4): the item's slot in the store's map, its key in an expiry bucket and its cost in
// the eviction policy.
const itemOverhead = 160

// entryBase is what every entry costs besides its slices and strings: the Entry and the store's item.
var entryBase = allocSize(int(unsafe.Sizeof(Entry{}))) + itemOverhead

// size is the memory an entry holds, for the byte budget. A string shared with the entry's own headers (the
// entity tag the gateway takes from the upstream's ETag) is counted once; strings or slices shared with another
// entry are counted in both, which errs on the side of the budget.
func (e *Entry) size() int64 {
	n := entryBase + allocSize(cap(e.Header)*int(unsafe.Sizeof(Header{})))
	for _, h := range e.Header {
		n += stringSize(h.Key) + stringSize(h.Value)
	}
	n += allocSize(cap(e.Body)) + allocSize(cap(e.Gzip)) + allocSize(cap(e.Brotli))
	for _, s := range [...]string{e.ETag, e.GzipETag, e.BrotliETag} {
		if !e.headerHolds(s) {
			n += stringSize(s)
		}
	}
	return n
}

// headerHolds reports whether s is the very string of one of e's header values (the same bytes, not equal ones).
func (e *Entry) headerHolds(s string) bool {
	for _, h := range e.Header {
		if len(s) > 0 && len(h.Value) == len(s) && unsafe.StringData(h.Value) == unsafe.StringData(s) {
			return true
		}
	}
	return false
}

// stringSize is the heap a string of s's length holds when it was allocated on its own.
func stringSize(s string) int64 { return allocSize(len(s)) }

// tight returns b, or a copy of it without its spare capacity when that spare capacity holds memory: a
// compressor's output grows by appending, and can hold a fifth more than it uses.
func tight(b []byte) []byte {
	if allocSize(cap(b)) == allocSize(len(b)) {
		return b
	}
	return append(make([]byte, 0, len(b)), b...)
}

// sizeClasses are the sizes of the Go allocator's small-object classes (internal/runtime/gc/sizeclasses.go,
// unchanged since go1.13): an allocation of n bytes up to 32 KiB takes the smallest class that holds it.
var sizeClasses = [...]int{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288,
	320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304,
	2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568,
	14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// pageSize is the unit of the allocator's larger allocations.
const pageSize = 8192

// allocSize is the memory the allocator gives an allocation of n bytes: its size class up to 32 KiB, whole
// pages above.
func allocSize(n int) int64 {
	if n <= 0 {
		return 0
	}
	if n > sizeClasses[len(sizeClasses)-1] {
		return int64((n + pageSize - 1) / pageSize * pageSize)
	}
	i, _ := slices.BinarySearch(sizeClasses[:], n)
	return int64(sizeClasses[i])
}

// storeBase is what a store costs whatever its size (measured, ristretto v2.4): mostly its buffer of pending
// Sets (32Ki pointers), its shards and their locks.
const storeBase = 300 << 10

// fixedSize is the memory New allocates up front for a store of counters frequency counters and a table of
// slots record generations: ristretto's count-min sketch (four rows of 4-bit counters, a power of two of
// them), its doorkeeper (a bloom filter for counters items at 1% false positives, a power of two of bits) and
// its buffers, and the table.
func fixedSize(counters int64, slots int) int64 {
	sketch := 4 * nextPow2(counters) / 2
	// bits per item of a bloom filter at 1% false positives: -ln(0.01)/ln(2)^2
	bloom := nextPow2(max(counters*9585/1000, 512)) / 8
	table := int64(slots) * int64(unsafe.Sizeof(uint64(0)))
	return storeBase + sketch + bloom + table
}

// nextPow2 is the smallest power of two >= n (n > 0).
func nextPow2(n int64) int64 {
	p := int64(1)
	for p < n {
		p <<= 1
	}
	return p
}
