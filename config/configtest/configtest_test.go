package configtest

import (
	"reflect"
	"testing"
	"time"
)

type inner struct {
	On  bool
	TTL time.Duration
}

type options struct {
	Name   string
	N      int
	List   []string
	Inner  inner
	hidden int
}

func TestOverlay(t *testing.T) {
	base := options{Name: "base", N: 3, List: []string{"a"}, Inner: inner{On: true, TTL: time.Second}, hidden: 7}
	tests := []struct {
		name string
		over options
		want options
	}{
		{"zero keeps base", options{}, base},
		{"scalar", options{N: 9}, options{Name: "base", N: 9, List: []string{"a"}, Inner: inner{On: true, TTL: time.Second}, hidden: 7}},
		{"list", options{List: []string{"b", "c"}}, options{Name: "base", N: 3, List: []string{"b", "c"}, Inner: inner{On: true, TTL: time.Second}, hidden: 7}},
		{"nested field", options{Inner: inner{TTL: time.Minute}}, options{Name: "base", N: 3, List: []string{"a"}, Inner: inner{On: true, TTL: time.Minute}, hidden: 7}},
		{"unexported ignored", options{hidden: 1}, base},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Overlay(base, tt.over); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestZeroFields(t *testing.T) {
	tests := []struct {
		name string
		v    options
		skip []string
		want []string
	}{
		{"all set", options{Name: "a", N: 1, List: []string{"x"}, Inner: inner{On: true, TTL: 1}}, nil, nil},
		{"nested zero", options{Name: "a", N: 1, List: []string{"x"}, Inner: inner{On: true}}, nil, []string{"Inner.TTL"}},
		{"skipped", options{Name: "a"}, []string{"N", "Inner"}, []string{"List"}},
		{"unexported ignored", options{Name: "a", N: 1, List: []string{"x"}, Inner: inner{On: true, TTL: 1}}, []string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ZeroFields(tt.v, tt.skip...); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
