package core

import (
	"errors"
	"testing"
)

func TestCheckSearch(t *testing.T) {
	searchable := map[int64]FieldType{103: TypePickOne, 101: TypeTextbox, 102: TypeTextarea}
	tests := []struct {
		cond Condition
		ok   bool
	}{
		{Condition{Attr: "created_time", Op: '>', Value: "1"}, true},
		{Condition{Attr: "deleted_time", Op: '=', Value: "1"}, false},
		{Condition{Attr: "created_by", Op: '=', Value: "5"}, true},
		{Condition{Attr: "last_updated_by", Op: '<', Value: "5"}, false},
		{Condition{Attr: "field_0103", Op: '=', Value: "2", FieldID: 103}, true},
		{Condition{Attr: "field_101", Op: '=', Value: "abc", FieldID: 101}, true},
		{Condition{Attr: "field_103", Op: '>', Value: "2", FieldID: 103}, false},
		{Condition{Attr: "field_102", Op: '=', Value: "x", FieldID: 102}, false}, // not searchable
		{Condition{Attr: "field_104", Op: '=', Value: "1", FieldID: 104}, false}, // gone since CheckConditions
	}
	for _, tc := range tests {
		err := CheckSearch("re", []Condition{tc.cond}, searchable)
		var ve *ValidationError
		switch {
		case tc.ok && err != nil:
			t.Errorf("CheckSearch(%s) = %v, want nil", tc.cond, err)
		case !tc.ok && !errors.As(err, &ve):
			t.Errorf("CheckSearch(%s) = %v, want a *ValidationError", tc.cond, err)
		}
	}
}
