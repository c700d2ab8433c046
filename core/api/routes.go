package api

import (
	"context"
	"net/http"

	"github.com/reqgate/reqgate/internal/wire/route"
)

// handler serves an authenticated request of its route, of a version and with a method the route serves, once
// the path's {segment} and {id} are resolved (c.Object, c.ID). Its other parameters it reads from c.Parts by
// their place in the route's template. Handlers are static functions, so dispatching allocates nothing.
type handler func(s *Server, w http.ResponseWriter, r *http.Request, c *call)

// handlers are the core's handlers of the routes of the route table (internal/wire/route), by class: the table
// says which paths are routes, of which versions and with which methods; a handler only serves. A route the
// gateway answers alone (GatewayOnly) has none. TestEveryRouteHasAHandler holds the two together.
var handlers = map[route.Class]handler{
	route.Object: func(s *Server, w http.ResponseWriter, r *http.Request, c *call) { s.getObjects(w, r, c) },
	route.Users:  func(s *Server, w http.ResponseWriter, r *http.Request, c *call) { s.getUsers(w, r, c) },
	route.User: func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.getUser(w, r, c, c.Parts[1])
	},
	route.Collection: func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.createRecord(w, r, c, c.Object)
	},
	route.Record: (*Server).serveRecord,
	route.Fields: func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.getFields(w, r, c, c.Object)
	},
	route.Views: func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.getViews(w, r, c, c.Object)
	},
	route.View: func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.getView(w, r, c, c.Object, c.Parts[2], false)
	},
	route.ViewSearch: func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.getView(w, r, c, c.Object, c.Parts[2], true)
	},
	route.Search: func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.search(w, r, c, c.Object)
	},
	route.Related: func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.getRelated(w, r, c, c.Object, c.ID)
	},
	route.History: func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.getHistory(w, r, c, c.Object, c.ID, c.Parts[3])
	},
}

// errNeedsV2 is the 404 of a route of version 2 asked under version 1.
var errNeedsV2 = &httpError{http.StatusNotFound,
	"The requested resource does not exist in version 1; this path needs version 2 (/api2/)."}

// dispatch serves an authenticated request on its route rt (nil when its path is none), in one order for every
// route: 404 for a path that names nothing (resolve), then 405 with Allow for a method the route does not serve,
// then the route's handler, which answers 404 for what it does not find (a record, a view, a field, a user).
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, c *call, rt *route.Spec) {
	if err := s.resolve(r.Context(), c, rt); err != nil {
		s.writeError(w, err)
		return
	}
	if !rt.Allows(r.Method) {
		s.writeError(w, methodNotAllowed(w, rt.Allow()))
		return
	}
	handlers[rt.Class](s, w, r, c)
}

// resolve checks that the path names something the core serves: a route of the core in the request's version,
// whose {segment} is a kind of the account in that version (c.Object) and whose {id} is written as a record id
// (c.ID). Anything else is a 404, whatever the method.
func (s *Server) resolve(ctx context.Context, c *call, rt *route.Spec) error {
	if rt == nil || rt.GatewayOnly || handlers[rt.Class] == nil {
		return errNoRoute
	}
	if c.Version < rt.MinVersion {
		return errNeedsV2
	}
	if seg, ok := rt.Param("segment", c.Parts); ok {
		obj, err := s.object(ctx, c, seg)
		if err != nil {
			return err
		}
		c.Object = obj
	}
	if idText, ok := rt.Param("id", c.Parts); ok {
		id, ok := parseID(idText)
		if !ok {
			return recordNotFound(c.Object, idText)
		}
		c.ID = id
	}
	return nil
}

// serveRecord serves GET (and HEAD), PUT and DELETE /{segment}/{id}.
func (s *Server) serveRecord(w http.ResponseWriter, r *http.Request, c *call) {
	switch r.Method {
	case http.MethodPut:
		s.updateRecord(w, r, c, c.Object, c.ID)
	case http.MethodDelete:
		s.deleteRecord(w, r, c, c.Object, c.ID)
	default: // GET or HEAD: dispatch let no other method through
		s.getRecord(w, r, c, c.Object, c.ID)
	}
}
