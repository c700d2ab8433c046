package api

import (
	"net/http"

	"github.com/reqgate/reqgate/core"
)

// getObjects serves GET /object.
func (s *Server) getObjects(w http.ResponseWriter, r *http.Request, c *call) {
	objs, err := s.st.Objects(r.Context(), c.Account.ID)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeXML(w, http.StatusOK, renderObjects(objs))
}

// renderObjects is the body of GET /object (docs/api.md, Objects): every kind of the account, built-in first,
// each with custom_object No or Yes and id_prefix without dash.
func renderObjects(objs []core.Object) []byte {
	x := newXMLSized(300 * len(objs))
	x.open("objects")
	for _, o := range objs {
		x.open("object")
		x.elem("object_unique_id", o.UniqueID)
		x.elem("api_prefix", o.APIPrefix)
		x.elem("name_singular", o.NameSingular)
		x.elem("name_plural", o.NamePlural)
		x.elem("description", o.Description)
		x.elem("id_prefix", o.IDPrefix)
		if o.Custom {
			x.elem("custom_object", "Yes")
		} else {
			x.elem("custom_object", "No")
		}
		x.elem("deploy_status", "Deployed")
		x.close("object")
	}
	x.close("objects")
	return x.bytes()
}
