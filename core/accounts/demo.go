package accounts

import (
	_ "embed"
	"maps"
	"slices"
	"sync"

	"github.com/reqgate/reqgate/core"
)

// DemoAPIKey is the api_key of the demo account; its users are demo/demo (id 1) and viewer/viewer (id 2),
// plus alice/alice and bob/bob, who share the address team@reqgate.test.
const DemoAPIKey = "demo"

//go:embed demo.yaml
var demoYAML []byte

var demo struct {
	once sync.Once
	p    *core.Provision
}

// Demo returns the demo account of the contract, parsed from the embedded demo.yaml. It is hashed once (at
// the BcryptCost of the first call) and each call returns a fresh copy the caller may change.
func Demo() *core.Provision {
	demo.once.Do(func() {
		p, err := Parse("demo.yaml", demoYAML)
		if err != nil {
			// The file is embedded and TestDemoParses checks it: this is a bug of the build, not bad input.
			panic("accounts: the embedded demo.yaml is invalid: " + err.Error())
		}
		demo.p = p
	})
	return clone(demo.p)
}

// clone deep-copies a provision so callers cannot change the cached demo.
func clone(p *core.Provision) *core.Provision {
	out := &core.Provision{Accounts: make([]core.AccountSpec, len(p.Accounts))}
	for i, a := range p.Accounts {
		c := a
		c.Users = slices.Clone(a.Users)
		for j := range c.Users {
			c.Users[j].PasswordHash = slices.Clone(c.Users[j].PasswordHash)
		}
		c.Fields = make(map[string][]core.Field, len(a.Fields))
		for k, fs := range a.Fields {
			c.Fields[k] = cloneFields(fs)
		}
		c.Objects = slices.Clone(a.Objects)
		for j := range c.Objects {
			c.Objects[j].Fields = cloneFields(c.Objects[j].Fields)
		}
		c.Views = slices.Clone(a.Views)
		c.Records = slices.Clone(a.Records)
		for j := range c.Records {
			c.Records[j].Values = maps.Clone(c.Records[j].Values)
		}
		c.Relationships = slices.Clone(a.Relationships)
		out.Accounts[i] = c
	}
	return out
}

func cloneFields(fs []core.Field) []core.Field {
	fs = slices.Clone(fs)
	for i := range fs {
		fs[i].Options = slices.Clone(fs[i].Options)
	}
	return fs
}
