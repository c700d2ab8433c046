// Package configtest helps tests build a package's options from config.Default: the packages take complete,
// resolved values (config is the one place a default is written), and a test states only what it changes.
package configtest

import "reflect"

// Overlay returns base with every exported field that is not the zero value in over copied over it; a struct
// field is overlaid field by field. A test therefore cannot set a value to zero through over: it assigns the
// zero value to the result instead.
func Overlay[T any](base, over T) T {
	b := reflect.ValueOf(&base).Elem()
	overlay(b, reflect.ValueOf(over))
	return base
}

func overlay(base, over reflect.Value) {
	for i := range base.NumField() {
		f, o := base.Field(i), over.Field(i)
		switch {
		case !f.CanSet() || o.IsZero():
		case f.Kind() == reflect.Struct:
			overlay(f, o)
		default:
			f.Set(o)
		}
	}
}

// ZeroFields lists the exported fields of the struct v that hold the zero value, nested structs walked (a path
// such as "Cache.TTL"), except those named in skip. A test of a package's mapping from the configuration fills
// every key and expects no field but those that are no configuration key (skip) to be left zero.
func ZeroFields(v any, skip ...string) []string {
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	var out []string
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		for i := range v.NumField() {
			f, sf := v.Field(i), v.Type().Field(i)
			name := prefix + sf.Name
			switch {
			case !sf.IsExported() || skipped[name]:
			case f.Kind() == reflect.Struct:
				walk(name+".", f)
			case f.IsZero():
				out = append(out, name)
			}
		}
	}
	walk("", reflect.ValueOf(v))
	return out
}
