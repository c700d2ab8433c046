package openapi

import (
	"bytes"
	"encoding/json"
)

// obj is a JSON object whose keys keep the order they were added in, so the document reads in the order of
// the OpenAPI specification and the interface rather than alphabetically.
type obj []member

type member struct {
	key   string
	value any
}

// set adds key, or replaces its value when it is already there.
func (o *obj) set(key string, value any) {
	for i := range *o {
		if (*o)[i].key == key {
			(*o)[i].value = value
			return
		}
	}
	*o = append(*o, member{key, value})
}

// get returns the value of key, or nil.
func (o obj) get(key string) any {
	for _, m := range o {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// o builds an obj from key, value pairs.
func o(kv ...any) obj {
	if len(kv)%2 != 0 {
		panic("openapi: odd number of key-value arguments")
	}
	r := make(obj, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		r = append(r, member{kv[i].(string), kv[i+1]})
	}
	return r
}

// ref is a JSON reference into the document's components.
func ref(section, name string) obj { return o("$ref", "#/components/"+section+"/"+name) }
