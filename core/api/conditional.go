package api

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/internal/wire"
)

// Conditional record writes (RFC 9110 §13). A record read carries a strong entity tag (ETag); a PUT or DELETE
// that sends it back in If-Match is applied only while the record still shows that tag, which the write's
// Edit or Check decides on the record as the store's write transaction holds it, so two writers who read the
// same version cannot both win. If-Unmodified-Since compares with last_updated_time the same way and is
// ignored when If-Match is sent. A write without either is unconditional, as it always was.

// recordTag is the entity tag of a record read's body. The body is the representation, so whatever changes it
// changes the tag: the record's values and version, but also a field's label or options and a user's name
// (account-file reloads), and the form of the API version. Hex keeps '-' out of the tag: the gateway names
// its own representations (JSON, compressed) by suffixes after one.
func recordTag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// tagOf is the entity tag a read of rec in API version would carry now, with schema sc.
func tagOf(version int, obj core.Object, sc *schema, rec core.Record) string {
	x := newXML()
	writeRecord(x, version, obj, sc.fields[obj.APIPrefix], sc, rec)
	tag := recordTag(x.bytes())
	x.release()
	return tag
}

// preconditions are the conditional headers of a record write.
type preconditions struct {
	ifMatch  bool     // If-Match was sent: it decides, If-Unmodified-Since is ignored
	any      bool     // If-Match: *
	tags     []string // the strong entity tags of If-Match, quoted; weak ones never match and are left out
	weak     bool     // If-Match named a weak tag
	unmodSet bool     // a valid If-Unmodified-Since was sent (and no If-Match)
	unmod    int64    // its time, UNIX seconds
}

// readPreconditions reads If-Match and If-Unmodified-Since: 400 for an If-Match that is no list of entity tags;
// an If-Unmodified-Since that is no HTTP date is ignored, as RFC 9110 requires.
func readPreconditions(h http.Header) (preconditions, error) {
	var p preconditions
	if values, sent := h["If-Match"]; sent {
		p.ifMatch = true
		n := 0
		for _, v := range values {
			for item := range strings.SplitSeq(v, ",") {
				item = strings.TrimSpace(item)
				if item == "" {
					continue
				}
				n++
				switch {
				case item == "*":
					p.any = true
				case strings.HasPrefix(item, `W/`) && wire.StrongETag(item[2:]):
					// A weak tag: the strong comparison If-Match uses never matches it.
					p.weak = true
				case wire.StrongETag(item):
					p.tags = append(p.tags, item)
				default:
					return p, &httpError{http.StatusBadRequest, "Invalid request: If-Match: " + strconv.Quote(clip(item)) +
						` is no entity tag; send back the ETag of a read, quotes included, or "*".`}
				}
			}
		}
		if n == 0 {
			return p, &httpError{http.StatusBadRequest, "Invalid request: If-Match: empty; send back the ETag of a read, or \"*\"."}
		}
		return p, nil
	}
	if v := h.Get("If-Unmodified-Since"); v != "" {
		if t, err := http.ParseTime(v); err == nil {
			p.unmodSet, p.unmod = true, t.Unix()
		}
	}
	return p, nil
}

// conditional reports whether the write has a condition to check.
func (p preconditions) conditional() bool { return p.ifMatch || p.unmodSet }

// check decides the conditions on the live record stored, whose current tag tag computes (only when needed).
func (p preconditions) check(obj core.Object, stored core.Record, tag func() string) error {
	switch {
	case p.ifMatch:
		if p.any {
			return nil
		}
		if len(p.tags) > 0 {
			now := tag()
			for _, t := range p.tags {
				if t == now {
					return nil
				}
			}
		}
		if len(p.tags) == 0 && p.weak {
			return preconditionFailed(obj, stored.ID, "is not matched by a weak entity tag (W/), which If-Match never accepts")
		}
		return preconditionFailed(obj, stored.ID, "has changed since the read whose ETag If-Match sends")
	case p.unmodSet && stored.LastUpdatedTime > p.unmod:
		return preconditionFailed(obj, stored.ID, "was modified after If-Unmodified-Since")
	}
	return nil
}

// gone is the answer to a conditional write of a record that is missing or deleted: 412 when If-Match was
// sent (no current representation matches it, not even "*"), else nil and the write answers as without it.
func (p preconditions) gone(obj core.Object, id int64) error {
	if !p.ifMatch {
		return nil
	}
	return preconditionFailed(obj, id, "does not exist or is deleted")
}

func preconditionFailed(obj core.Object, id int64, why string) error {
	return &httpError{http.StatusPreconditionFailed, "Precondition failed: the record " + obj.WirePrefix() +
		strconv.FormatInt(id, 10) + " " + why + "; read it again and retry."}
}
