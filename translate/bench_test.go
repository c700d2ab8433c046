package translate

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clbanning/mxj/v2"
)

// viewListing is the contents of a view in the core's layout, about size bytes of record summaries.
func viewListing(size int) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<view>\n")
	for i := 1; b.Len() < size; i++ {
		fmt.Fprintf(&b, "<requirement>\n<id>%d</id>\n<id_prefix>RE-</id_prefix>\n<title>Export list %d to CSV &amp; TSV</title>\n"+
			"<version_number>%d</version_number>\n<created_time unit=\"GMT Timestamp\">%d</created_time>\n"+
			"<last_updated_time unit=\"GMT Timestamp\">%d</last_updated_time>\n<created_by>5</created_by>\n"+
			"<last_updated_by>6</last_updated_by>\n</requirement>\n", i, i, i%7+1, 1700000000+i, 1700003600+i)
	}
	b.WriteString("</view>\n")
	return []byte(b.String())
}

// gnode is the generic struct of the reference: what encoding/xml and encoding/json offer without a schema.
type gnode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr" json:",omitempty"`
	Text    string     `xml:",chardata" json:",omitempty"`
	Nodes   []gnode    `xml:",any" json:",omitempty"`
}

type benchDoc struct {
	name    string
	xml     []byte
	json    []byte // this package's JSON form
	refJSON []byte // the reference's JSON form
	mxjJSON []byte
}

func benchDocs(b *testing.B) []benchDoc {
	record, err := os.ReadFile("testdata/record_requirement.xml")
	if err != nil {
		b.Fatal(err)
	}
	var docs []benchDoc
	for _, d := range []struct {
		name string
		xml  []byte
	}{{"view_1MB", viewListing(1 << 20)}, {"record", record}} {
		js, err := XMLToJSON(d.xml)
		if err != nil {
			b.Fatal(err)
		}
		var g gnode
		if err := xml.Unmarshal(d.xml, &g); err != nil {
			b.Fatal(err)
		}
		ref, err := json.Marshal(&g)
		if err != nil {
			b.Fatal(err)
		}
		m, err := mxj.NewMapXml(d.xml)
		if err != nil {
			b.Fatal(err)
		}
		mj, err := m.Json()
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, benchDoc{name: d.name, xml: d.xml, json: js, refJSON: ref, mxjJSON: mj})
	}
	return docs
}

// BenchmarkXMLToJSON measures XML -> JSON: this package, the reference (encoding/xml into generic structs,
// then encoding/json) and mxj (NewMapXml, Json). MB/s counts XML input bytes.
func BenchmarkXMLToJSON(b *testing.B) {
	for _, d := range benchDocs(b) {
		b.Run(d.name+"/translate", func(b *testing.B) {
			b.SetBytes(int64(len(d.xml)))
			defer cpuRate(b, len(d.xml))()
			for b.Loop() {
				if _, err := XMLToJSON(d.xml); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/reference", func(b *testing.B) {
			b.SetBytes(int64(len(d.xml)))
			defer cpuRate(b, len(d.xml))()
			for b.Loop() {
				var g gnode
				if err := xml.Unmarshal(d.xml, &g); err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(&g); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/mxj", func(b *testing.B) {
			b.SetBytes(int64(len(d.xml)))
			defer cpuRate(b, len(d.xml))()
			for b.Loop() {
				m, err := mxj.NewMapXml(d.xml)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.Json(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJSONToXML measures JSON -> XML, each from its own JSON form of the same document. MB/s counts
// JSON input bytes.
func BenchmarkJSONToXML(b *testing.B) {
	for _, d := range benchDocs(b) {
		b.Run(d.name+"/translate", func(b *testing.B) {
			b.SetBytes(int64(len(d.json)))
			defer cpuRate(b, len(d.json))()
			for b.Loop() {
				if _, err := JSONToXML(d.json); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/reference", func(b *testing.B) {
			b.SetBytes(int64(len(d.refJSON)))
			defer cpuRate(b, len(d.refJSON))()
			for b.Loop() {
				var g gnode
				if err := json.Unmarshal(d.refJSON, &g); err != nil {
					b.Fatal(err)
				}
				if _, err := xml.Marshal(&g); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/mxj", func(b *testing.B) {
			b.SetBytes(int64(len(d.mxjJSON)))
			defer cpuRate(b, len(d.mxjJSON))()
			for b.Loop() {
				m, err := mxj.NewMapJson(d.mxjJSON)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.Xml(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWantsJSON measures negotiation of a typical browser Accept header.
func BenchmarkWantsJSON(b *testing.B) {
	accept := []byte("application/json, text/plain;q=0.9, */*;q=0.8")
	for b.Loop() {
		if !WantsJSON(accept) {
			b.Fatal("want JSON")
		}
	}
}

// cpuRate reports throughput per CPU second of the process (user + system, GC included) as "cpu-MB/s".
// The machine the figures come from is shared: wall-clock MB/s moves with the load of other processes,
// CPU time much less. Call it as defer cpuRate(b, n)() before the loop.
func cpuRate(b *testing.B, n int) func() {
	start := cpuTime()
	return func() {
		if s := (cpuTime() - start).Seconds(); s > 0 && b.N > 0 {
			b.ReportMetric(float64(n)*float64(b.N)/s/1e6, "cpu-MB/s")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
