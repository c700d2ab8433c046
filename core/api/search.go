package api

import (
	"net/http"

	"github.com/reqgate/reqgate/core"
)

// Limits of a search query string: far above any real client, low enough that a crafted query cannot make
// the store build an enormous statement.
const (
	maxSearchQuery      = 4096
	maxSearchConditions = 32
)

// search serves GET /<segment>/search?<conditions>: the summaries of the kind's records matching every
// condition, ordered by id, under <search_results>.
func (s *Server) search(w http.ResponseWriter, r *http.Request, c *call, obj core.Object) {
	ctx := r.Context()
	fields, err := s.fields(ctx, c, obj.APIPrefix)
	if err != nil {
		s.writeError(w, err)
		return
	}
	conds, err := queryConditions(r.URL.RawQuery, fields)
	if err != nil {
		s.writeError(w, err)
		return
	}
	sums, err := s.st.Search(ctx, c.Account.ID, obj.APIPrefix, conds)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeXML(w, http.StatusOK, renderSummaries("search_results", sums))
}

// queryConditions reads the conditions of a search query string (raw or percent-encoded operators, joined
// by &, or each the value of a q parameter) and checks them against the kind's fields. Errors are *core.ValidationError naming the condition.
func queryConditions(rawQuery string, fields []core.Field) ([]core.Condition, error) {
	if len(rawQuery) > maxSearchQuery {
		return nil, core.Invalid("", "search query longer than 4096 bytes")
	}
	conds, err := core.ParseSearchQuery(rawQuery)
	if err != nil {
		return nil, err
	}
	if len(conds) > maxSearchConditions {
		return nil, core.Invalid("", "more than 32 search conditions")
	}
	if err := core.CheckConditions(conds, fields); err != nil {
		return nil, err
	}
	return conds, nil
}

// summaryElement is the element name of a summary of kind: requirement, feature, use_case or custom_object.
func summaryElement(kind string) string { return core.Object{APIPrefix: kind}.RootElement() }

// summaryPrefix is the id_prefix shown in a summary: RE-, FT-, UC-, or CO- for every custom object.
func summaryPrefix(kind string) string {
	switch kind {
	case core.KindRequirement:
		return "RE-"
	case core.KindFeature:
		return "FT-"
	case core.KindUseCase:
		return "UC-"
	}
	return "CO-"
}

// summary writes one record summary (children in the order of docs/api.md, Record summaries); relType, when not
// empty, is the leading relationship_type of a relationship item.
func (x *xmlw) summary(relType string, s core.Summary) {
	elem := summaryElement(s.Kind)
	x.open(elem)
	if relType != "" {
		x.elem("relationship_type", relType)
	}
	x.elemInt("id", s.ID)
	x.elem("id_prefix", summaryPrefix(s.Kind))
	x.elem("title", s.Title)
	x.elemInt("version_number", s.Version)
	x.elemStamp("created_time", s.CreatedTime)
	x.elemStamp("last_updated_time", s.LastUpdatedTime)
	x.elemInt("created_by", s.CreatedBy)
	x.elemInt("last_updated_by", s.LastUpdatedBy)
	x.close(elem)
}

// renderSummaries is a root element (search_results, or view for view contents and view search) holding
// the summaries directly, in the order given.
func renderSummaries(root string, sums []core.Summary) []byte {
	x := newXMLSized(64 + 400*len(sums))
	x.open(root)
	for _, s := range sums {
		x.summary("", s)
	}
	x.close(root)
	return x.bytes()
}
