package coretest

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Counter describes concurrent read-modify-write clients of one integer field of one record, as the interface's
// manual has clients update a record: read it, change one value, send the document read back with its
// version_number. A PUT refused because the version moved on (400, version_number) is read and tried again; every
// 200 is an acknowledged increment. See RunCounter.
type Counter struct {
	// Bases are the base URLs the clients spread over (http://host:port/api2/{key}), one per core or gateway.
	Bases []string
	// Users are username, password pairs; client i is Users[i%len(Users)].
	Users [][2]string
	// Kind is the segment of the record (re), Root its root element (requirement), ID its id and Field the
	// field_<n> of the counter, a Number-Integer field (empty counts as 0).
	Kind, Root, Field string
	ID                int64
	// Clients run at once, each until it has Increments acknowledged.
	Clients, Increments int
	// JSON reads and writes application/json (through a gateway) instead of XML.
	JSON bool
}

// CounterResult is what the clients were told and what the store holds afterwards.
type CounterResult struct {
	Acked     int   // PUTs answered 200
	Conflicts int   // PUTs refused because the version_number sent back was no longer the record's
	Value     int64 // the counter read back at the end
	Version   int64 // the record's version_number read back at the end
}

// RunCounter runs the clients of c and reads the record back. It reports an unexpected status or a transport
// failure as an error (a lost write cannot be told from a client's failure, so the test fails on either).
func RunCounter(c Counter) (CounterResult, error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		res  CounterResult
		errs []error
	)
	for i := range c.Clients {
		wg.Go(func() {
			cl := &client{c: c, hc: &http.Client{Timeout: 30 * time.Second},
				base: c.Bases[i%len(c.Bases)], user: c.Users[i%len(c.Users)]}
			acked, conflicts, err := cl.run()
			mu.Lock()
			defer mu.Unlock()
			res.Acked += acked
			res.Conflicts += conflicts
			if err != nil {
				errs = append(errs, fmt.Errorf("client %d (%s via %s): %w", i, cl.user[0], cl.base, err))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	cl := &client{c: c, hc: &http.Client{Timeout: 30 * time.Second}, base: c.Bases[0], user: c.Users[0]}
	doc, err := cl.read()
	if err != nil {
		return res, fmt.Errorf("read back: %w", err)
	}
	res.Value, res.Version = doc.counter, doc.version
	return res, nil
}

// CheckCounter fails t unless every acknowledged increment is in the record: the counter holds start plus the
// acknowledged increments, the version rose by one per increment, and the counter's field history steps by
// exactly +1 from start, with no gap and no step back.
func CheckCounter(t testing.TB, c Counter, start, startVersion int64, res CounterResult) {
	t.Helper()
	if got, want := res.Value, start+int64(res.Acked); got != want {
		t.Errorf("counter = %d after %d acknowledged increments from %d: %d acknowledged writes lost",
			got, res.Acked, start, want-got)
	}
	if got, want := res.Version, startVersion+int64(res.Acked); got != want {
		t.Errorf("version_number = %d after %d acknowledged increments from version %d, want %d",
			got, res.Acked, startVersion, want)
	}
	fid := strings.TrimPrefix(c.Field, "field_")
	cl := &client{c: Counter{Bases: c.Bases, Users: c.Users}, hc: &http.Client{Timeout: 30 * time.Second},
		base: c.Bases[0], user: c.Users[0]}
	body, status, err := cl.do(http.MethodGet, "/"+c.Kind+"/"+strconv.FormatInt(c.ID, 10)+"/fieldhistory/"+fid, "")
	if err != nil || status != http.StatusOK {
		t.Fatalf("field history: %d %v %s", status, err, body)
	}
	var h struct {
		Items []struct {
			Old string `xml:"old_value"`
			New string `xml:"new_value"`
		} `xml:"history"`
	}
	if err := xml.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("field history: %v in %s", err, body)
	}
	want := start + 1
	for i, it := range h.Items {
		old, nw := atoi0(it.Old), atoi0(it.New)
		if nw <= start {
			continue // a change made before the clients started
		}
		if old != want-1 || nw != want {
			t.Errorf("history entry %d steps %s -> %s, want %d -> %d", i, it.Old, it.New, want-1, want)
		}
		want = nw + 1
	}
	if got := want - 1 - start; got != int64(res.Acked) {
		t.Errorf("field history ends at %d increments, want %d (one per acknowledged write)", got, res.Acked)
	}
}

func atoi0(s string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n
}

// client is one read-modify-write client.
type client struct {
	c    Counter
	hc   *http.Client
	base string
	user [2]string
}

// doc is a record read: the document as read, its version and the counter's value.
type doc struct {
	body             string
	version, counter int64
}

func (cl *client) run() (acked, conflicts int, err error) {
	for acked < cl.c.Increments {
		d, err := cl.read()
		if err != nil {
			return acked, conflicts, err
		}
		body, err := cl.bump(d)
		if err != nil {
			return acked, conflicts, err
		}
		res, status, err := cl.do(http.MethodPut, cl.path(), body)
		switch {
		case err != nil:
			return acked, conflicts, fmt.Errorf("PUT: %w", err)
		case status == http.StatusOK:
			acked++
		case status == http.StatusBadRequest && strings.Contains(res, "version_number"):
			conflicts++
		default:
			return acked, conflicts, fmt.Errorf("PUT: status %d: %s", status, res)
		}
	}
	return acked, conflicts, nil
}

func (cl *client) path() string { return "/" + cl.c.Kind + "/" + strconv.FormatInt(cl.c.ID, 10) }

func (cl *client) do(method, path, body string) (string, int, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, cl.base+path, rd)
	if err != nil {
		return "", 0, err
	}
	req.SetBasicAuth(cl.user[0], cl.user[1])
	ct := "application/xml"
	if cl.c.JSON {
		ct = "application/json"
	}
	req.Header.Set("Accept", ct)
	// A read-modify-write client must see the record as it is: a cached read may lag behind a write made
	// through another gateway, and then every PUT would be refused until the cache catches up.
	req.Header.Set("Cache-Control", "no-cache")
	if body != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := cl.hc.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode, err
}

func (cl *client) read() (doc, error) {
	body, status, err := cl.do(http.MethodGet, cl.path(), "")
	if err != nil || status != http.StatusOK {
		return doc{}, fmt.Errorf("GET: %d %v %s", status, err, body)
	}
	d := doc{body: body}
	if cl.c.JSON {
		return d, cl.readJSON(&d)
	}
	v, ok := xmlValue(body, "version_number")
	if !ok {
		return d, fmt.Errorf("no version_number in %s", body)
	}
	d.version = atoi0(v)
	v, _ = xmlValue(body, cl.c.Field)
	d.counter = atoi0(v)
	return d, nil
}

// xmlValue finds the <value> of the field called name in a record read.
func xmlValue(body, name string) (string, bool) {
	m := regexp.MustCompile(`<name>` + name + `</name>\s*<label>[^<]*</label>\s*<value>([^<]*)</value>`).
		FindStringSubmatch(body)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// bump is the document read with the counter one higher, everything else (version_number included) as read.
func (cl *client) bump(d doc) (string, error) {
	next := strconv.FormatInt(d.counter+1, 10)
	if cl.c.JSON {
		return cl.bumpJSON(d, next)
	}
	re := regexp.MustCompile(`(<name>` + cl.c.Field + `</name>\s*<label>[^<]*</label>\s*)(<value>[^<]*</value>|<value\s*/>)`)
	if !re.MatchString(d.body) {
		return "", fmt.Errorf("no %s in %s", cl.c.Field, d.body)
	}
	return re.ReplaceAllString(d.body, "${1}<value>"+next+"</value>"), nil
}

// jsonDoc is a record read in JSON: {"<root>":{"fields":{"field":[{"name":..,"value":..},...]}}}.
type jsonDoc map[string]struct {
	Fields struct {
		Field []map[string]any `json:"field"`
	} `json:"fields"`
}

func (cl *client) readJSON(d *doc) error {
	var jd jsonDoc
	if err := json.Unmarshal([]byte(d.body), &jd); err != nil {
		return fmt.Errorf("JSON read: %w in %s", err, d.body)
	}
	for _, f := range jd[cl.c.Root].Fields.Field {
		switch f["name"] {
		case "version_number":
			d.version = atoi0(fmt.Sprint(f["value"]))
		case cl.c.Field:
			if f["value"] != nil {
				d.counter = atoi0(fmt.Sprint(f["value"]))
			}
		}
	}
	if d.version == 0 {
		return fmt.Errorf("no version_number in %s", d.body)
	}
	return nil
}

func (cl *client) bumpJSON(d doc, next string) (string, error) {
	var jd jsonDoc
	if err := json.Unmarshal([]byte(d.body), &jd); err != nil {
		return "", err
	}
	r := jd[cl.c.Root]
	for _, f := range r.Fields.Field {
		if f["name"] == cl.c.Field {
			f["value"] = next
		}
	}
	b, err := json.Marshal(jsonDoc{cl.c.Root: r})
	return string(b), err
}
