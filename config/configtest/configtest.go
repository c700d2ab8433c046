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
