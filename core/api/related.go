package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/reqgate/reqgate/core"
)

// getRelated serves GET /<segment>/{id}/related. 404 for a missing or deleted record.
func (s *Server) getRelated(w http.ResponseWriter, r *http.Request, c *call, obj core.Object, id int64) {
	ctx := r.Context()
	rels, err := s.st.Related(ctx, c.Account.ID, obj.APIPrefix, id)
	if errors.Is(err, core.ErrNotFound) {
		err = recordNotFound(obj, strconv.FormatInt(id, 10))
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeXML(w, http.StatusOK, renderRelated(obj.APIPrefix, id, rels))
}

// relatedGroups are the groups of a related-items response in the order docs/api.md (Related items) gives.
var relatedGroups = []struct{ group, kind string }{
	{"requirements", core.KindRequirement},
	{"features", core.KindFeature},
	{"use_cases", core.KindUseCase},
	{"custom_objects", ""}, // every custom kind
}

// renderRelated is the body of GET /<segment>/{id}/related: <relationships id_prefix="RE" id="55"> naming
// the queried record (prefix without dash, CO for custom records), then the groups with items, empty groups
// left out. Within a group the items keep the store's order (custom kinds by api_prefix, then id).
func renderRelated(kind string, id int64, rels []core.Relation) []byte {
	x := newXMLSized(128 + 450*len(rels))
	prefix := summaryPrefix(kind)
	x.openAttrs("relationships", "id_prefix", prefix[:len(prefix)-1], "id", strconv.FormatInt(id, 10))
	for _, g := range relatedGroups {
		started := false
		for _, r := range rels {
			if !inGroup(r.Kind, g.kind) {
				continue
			}
			if !started {
				x.open(g.group)
				started = true
			}
			x.summary(r.Type, r.Summary)
		}
		if started {
			x.close(g.group)
		}
	}
	x.close("relationships")
	return x.bytes()
}

// inGroup reports whether a record of kind belongs to the group of groupKind ("" = the custom objects).
func inGroup(kind, groupKind string) bool {
	if groupKind != "" {
		return kind == groupKind
	}
	return kind != core.KindRequirement && kind != core.KindFeature && kind != core.KindUseCase
}
