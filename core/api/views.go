package api

import (
	"fmt"
	"net/http"

	"github.com/reqgate/reqgate/core"
)

// getViews serves GET /<segment>/view: the views of the kind.
func (s *Server) getViews(w http.ResponseWriter, r *http.Request, c *call, obj core.Object) {
	ctx := r.Context()
	views, err := s.st.Views(ctx, c.Account.ID, obj.APIPrefix)
	if err != nil {
		s.writeError(w, err)
		return
	}
	users, err := s.users(ctx, c)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeXML(w, http.StatusOK, renderViews(views, users))
}

// getView serves GET /<segment>/view/{id} and, with search, GET /<segment>/view/{id}/search?<conditions>:
// the summaries of the live records matching the view's own conditions (and the query's), evaluated now,
// under <view>. 404 for an unknown view or a view of another kind.
func (s *Server) getView(w http.ResponseWriter, r *http.Request, c *call, obj core.Object, idText string, search bool) {
	ctx := r.Context()
	id, ok := parseID(idText)
	if !ok {
		s.writeError(w, viewNotFound(obj, idText))
		return
	}
	views, err := s.st.Views(ctx, c.Account.ID, obj.APIPrefix)
	if err != nil {
		s.writeError(w, err)
		return
	}
	i := -1
	for j := range views {
		if views[j].ID == id {
			i = j
		}
	}
	if i < 0 {
		// A view of another kind is not found either: the path names the kind.
		s.writeError(w, viewNotFound(obj, idText))
		return
	}
	fields, err := s.fields(ctx, c, obj.APIPrefix)
	if err != nil {
		s.writeError(w, err)
		return
	}
	conds, err := viewConditions(views[i], fields)
	if err != nil {
		s.writeError(w, err)
		return
	}
	if search {
		q, err := queryConditions(r.URL.RawQuery, fields)
		if err == nil {
			err = narrowsView(q, obj.APIPrefix)
		}
		if err != nil {
			s.writeError(w, err)
			return
		}
		conds = append(conds, q...)
	}
	sums, err := s.st.Search(ctx, c.Account.ID, obj.APIPrefix, conds)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeXML(w, http.StatusOK, renderSummaries("view", sums))
}

// narrowsView refuses the conditions of a view search that would not narrow the view: a view lists live
// records, and a deleted_time condition would list deleted ones instead (the store reads deleted_time as "the
// deleted records"), records the view itself never shows.
func narrowsView(conds []core.Condition, kind string) error {
	for _, c := range conds {
		if c.Attr == "deleted_time" {
			return core.Invalid(c.String(), "a view lists live records only, so a view search takes no deleted_time; "+
				"search deleted records with /"+kind+"/search")
		}
	}
	return nil
}

// viewConditions parses and checks a view's stored conditions. The account file was checked when applied,
// so a failure here means the fields changed under the view: a server-side fault (500), not the caller's,
// hence the error does not wrap the *core.ValidationError.
func viewConditions(v core.View, fields []core.Field) ([]core.Condition, error) {
	conds, err := core.ParseConditions(v.Conditions)
	if err == nil {
		err = core.CheckConditions(conds, fields)
	}
	if err != nil {
		return nil, fmt.Errorf("view %d of %s: conditions %q: %v", v.ID, v.Kind, v.Conditions, err)
	}
	return conds, nil
}

// renderViews is the body of GET /<segment>/view: one <view> per view with its creator's names (empty when
// the creator is not a user of the account any more).
func renderViews(views []core.View, users []core.User) []byte {
	byID := make(map[int64]core.User, len(users))
	for _, u := range users {
		byID[u.ID] = u
	}
	x := newXMLSized(250 * len(views))
	x.open("views")
	for _, v := range views {
		u := byID[v.CreatedBy]
		x.open("view")
		x.elemInt("view_id", v.ID)
		x.elem("name", v.Name)
		x.elem("description", v.Description)
		x.elem("created_by_firstname", u.FirstName)
		x.elem("created_by_lastname", u.LastName)
		x.close("view")
	}
	x.close("views")
	return x.bytes()
}
