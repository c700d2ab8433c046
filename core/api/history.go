package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/reqgate/reqgate/core"
)

// getHistory serves GET /<segment>/{id}/fieldhistory/{field_id}. 404 for a missing or deleted record and
// for a field id that is not a field of the kind.
func (s *Server) getHistory(w http.ResponseWriter, r *http.Request, c *call, obj core.Object, id int64, fieldText string) {
	body, err := s.history(r.Context(), c, obj, id, fieldText)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeXML(w, http.StatusOK, body)
}

// history is the body of getHistory.
func (s *Server) history(ctx context.Context, c *call, obj core.Object, id int64, fieldText string) ([]byte, error) {
	fieldID, ok := parseID(fieldText)
	if !ok {
		return nil, fieldNotFound(obj, fieldText)
	}
	fields, err := s.fields(ctx, c, obj.APIPrefix)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(fields, func(f core.Field) bool { return f.ID == fieldID })
	if i < 0 {
		return nil, fieldNotFound(obj, fieldText)
	}
	f := fields[i]
	rec, err := s.st.Record(ctx, c.Account.ID, obj.APIPrefix, id)
	if errors.Is(err, core.ErrNotFound) || err == nil && rec.DeletedTime != 0 {
		return nil, recordNotFound(obj, strconv.FormatInt(id, 10))
	}
	if err != nil {
		return nil, err
	}
	changes, err := s.st.History(ctx, c.Account.ID, obj.APIPrefix, id, fieldID)
	if err != nil {
		return nil, err
	}
	var users []core.User
	if f.ListType == core.ListUser && len(changes) > 0 {
		if users, err = s.users(ctx, c); err != nil {
			return nil, err
		}
	}
	return renderHistory(f, changes, users), nil
}

// renderHistory is the body of a field-history read: one <history> per change of field f, in the order
// given (oldest first), values shaped by the field's type.
func renderHistory(f core.Field, changes []core.Change, users []core.User) []byte {
	var byID map[int64]core.User
	if f.ListType == core.ListUser {
		byID = make(map[int64]core.User, len(users))
		for _, u := range users {
			byID[u.ID] = u
		}
	}
	x := newXMLSized(64 + 300*len(changes))
	x.open("history_items")
	for _, c := range changes {
		x.open("history")
		x.elemInt("user_id", c.UserID)
		x.elem("action", "Modified")
		x.historyValue("old_value", f, c.Old, byID)
		x.historyValue("new_value", f, c.New, byID)
		x.elemStamp("activity_time", c.Time)
		x.close("history")
	}
	x.close("history_items")
	return x.bytes()
}

// historyValue writes one old_value or new_value in the shape docs/api.md (Field history) gives for the field's type. An
// empty value is an empty element whatever the type.
func (x *xmlw) historyValue(name string, f core.Field, v string, users map[int64]core.User) {
	if v == "" {
		x.empty(name)
		return
	}
	switch f.Type {
	case core.TypeTextarea:
		x.elemCDATA(name, v)
	case core.TypePickOne:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			x.elem(name, v)
			return
		}
		x.choice(name, f, n, users)
	case core.TypePickMultiple:
		x.open(name)
		for _, n := range core.SplitIDs(v) {
			x.choice("value", f, n, users)
		}
		x.close(name)
	case core.TypeDate:
		y, rest, ok1 := strings.Cut(v, "-")
		m, day, ok2 := strings.Cut(rest, "-")
		if !ok1 || !ok2 {
			x.elem(name, v)
			return
		}
		x.open(name)
		x.elem("year", y)
		x.elem("month", m)
		x.elem("date", day)
		x.elem("timezone", "GMT")
		x.close(name)
	case core.TypeCheckbox:
		if v == "1" {
			x.elemAttrs(name, "Checked", "value", "1")
		} else {
			x.elemAttrs(name, "Unchecked", "value", "0")
		}
	default: // Text, Email, URL, Number, Textbox, Number-Integer: plain text
		x.elem(name, v)
	}
}

// choice writes element name for picklist value n: id and option label, or for a user picklist id, email
// and the user's display name (empty for a user no longer in the account).
func (x *xmlw) choice(name string, f core.Field, n int64, users map[int64]core.User) {
	id := strconv.FormatInt(n, 10)
	if f.ListType == core.ListUser {
		u := users[n]
		x.elemAttrs(name, u.DisplayName(), "id", id, "email", u.Email)
		return
	}
	o, _ := f.Option(n)
	x.elemAttrs(name, o.Label, "id", id)
}
