package api

import (
	"net/http"
	"strings"

	"github.com/reqgate/reqgate/core"
)

// getUsers serves GET /user: <users> with every user of the account.
func (s *Server) getUsers(w http.ResponseWriter, r *http.Request, c *call) {
	users, err := s.users(r.Context(), c)
	if err != nil {
		s.writeError(w, err)
		return
	}
	x := newXML()
	x.open("users")
	for _, u := range users {
		writeUser(x, u)
	}
	x.close("users")
	writeXML(w, http.StatusOK, x.bytes())
	x.release()
}

// getUser serves GET /user/{id} (one <user>) and GET /user/{email} (<users> with every user of that
// address; several may share one). The form of the segment decides: an integer is an id, an address
// (containing '@') an email. 404 when nothing matches.
func (s *Server) getUser(w http.ResponseWriter, r *http.Request, c *call, seg string) {
	users, err := s.users(r.Context(), c)
	if err != nil {
		s.writeError(w, err)
		return
	}
	if id, ok := parseID(seg); ok {
		for _, u := range users {
			if u.ID == id {
				x := newXML()
				writeUser(x, u)
				writeXML(w, http.StatusOK, x.bytes())
				x.release()
				return
			}
		}
		s.writeError(w, &httpError{http.StatusNotFound, "The user " + seg + " does not exist."})
		return
	}
	if !strings.Contains(seg, "@") {
		s.writeError(w, errNoRoute)
		return
	}
	x := newXML()
	x.open("users")
	n := 0
	for _, u := range users {
		if strings.EqualFold(u.Email, seg) {
			writeUser(x, u)
			n++
		}
	}
	x.close("users")
	if n == 0 {
		x.release()
		s.writeError(w, &httpError{http.StatusNotFound, "No user has the email address " + clip(seg) + "."})
		return
	}
	writeXML(w, http.StatusOK, x.bytes())
	x.release()
}

// writeUser writes one <user> in the element order of docs/api.md (Users). <deleted> is empty for a live user
// (as in the samples) and 1 for a deleted one.
func writeUser(x *xmlw, u core.User) {
	x.open("user")
	x.elemInt("user_id", u.ID)
	x.elem("email", u.Email)
	x.elem("username", u.Username)
	x.elem("firstname", u.FirstName)
	x.elem("lastname", u.LastName)
	if u.Deleted {
		x.elem("deleted", "1")
	} else {
		x.b = append(x.b, "<deleted></deleted>\n"...)
	}
	status := u.Status
	if status == "" {
		status = "Active"
	}
	x.elem("status", status)
	x.close("user")
}
