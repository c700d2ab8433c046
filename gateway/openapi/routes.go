package openapi

import (
	"strconv"
	"strings"

	"github.com/reqgate/reqgate/internal/wire/route"
)

// Kind is a record kind of the interface as the paths name it: the {segment} of the route table's templates.
type Kind struct {
	Segment    string // the path segment: re, ft, uc, or the template {api_prefix} of every custom object
	Root       string // the root element of a record: requirement, feature, use_case, custom_object
	Name       string // the kind in operation ids: Requirement, Feature, UseCase, CustomObject
	MinVersion int    // custom objects exist from version 2 on
}

// Kinds are the record kinds, in the order of docs/api.md.
var Kinds = []Kind{
	{"re", "requirement", "Requirement", 1},
	{"ft", "feature", "Feature", 1},
	{"uc", "use_case", "UseCase", 1},
	{"{api_prefix}", "custom_object", "CustomObject", 2},
}

// Operation is what the document says of one method of a route beyond the route table (internal/wire/route),
// which gives the paths, their classes, methods and versions, and which of them the gateway caches or answers
// itself. TestEveryRouteDocumented fails when a route of the table has a method without its Operation, and when
// an Operation is of no route.
type Operation struct {
	// Name names the operation in operation ids, with the kind's Name for "{kind}": GetRequirement,
	// CreateFeature, SearchUseCaseView.
	Name    string
	Body    string   // root element of the request body, "" for none
	Status  int      // the status of success
	Result  []string // root elements of the success body (any one of them); none for an empty body
	Errors  []int    // statuses of failure beyond those of every route (commonErrors)
	Summary string
	Doc     string // the description: what the summary leaves out
}

// commonErrors are the failures any route of the API may answer: a malformed target or body (400), missing
// or wrong credentials (401), a resource that does not exist (404), rate limits (429, or 503 where the
// operator chose the mirrored service's status), and failures of the core or of the way to it.
var commonErrors = []int{400, 401, 404, 429, 500, 502, 503, 504}

// conditionalDoc describes the conditional writes of a record.
const conditionalDoc = "With If-Match (the ETag of a read of the record, in any representation, through any gateway) the write " +
	"is applied only if the record still has that representation, decided in the core's write transaction: 412 when it " +
	"changed since, or when the record is missing or deleted (also for If-Match: *). A weak tag (W/) never matches. " +
	"If-Unmodified-Since is 412 when last_updated_time is later, and is ignored with If-Match."

// writeErrors are the further failures of a request with a body.
var writeErrors = []int{413, 415, 422}

// operations are the operations of the routes of the table, by class and method. In Body and Result, "{root}"
// stands for the root element of the record kind of the path's {segment}.
var operations = map[route.Class]map[string]Operation{
	route.Object: {"GET": {Name: "GetObjects", Status: 200, Result: []string{"objects"},
		Summary: "List the objects (record kinds) of the account",
		Doc:     "The built-in kinds re, ft and uc (custom_object No) and every custom object (custom_object Yes), whose api_prefix is the path segment of its records."}},
	route.Users: {"GET": {Name: "GetUsers", Status: 200, Result: []string{"users"},
		Summary: "List every user of the account"}},
	route.User: {"GET": {Name: "GetUser", Status: 200, Result: []string{"user", "users"},
		Summary: "Read one user by id, or the users of one email address",
		Doc:     "An integer selects a user by id (root user); an email address selects every user with that address (root users, one or more; 404 when none)."}},
	route.Throttle: {"GET": {Name: "GetRateThrottleStatus", Status: 200, Result: []string{"rate_throttle_status"},
		Summary: "Report whether the caller is throttled, without counting as a call"}},
	route.Collection: {"POST": {Name: "Create{kind}", Body: "{root}", Status: 201, Errors: writeErrors, Summary: "Create a record",
		Doc: "The authenticated user is the creator. Location names the new record, under the API version of the request."}},
	route.Record: {
		"GET": {Name: "Get{kind}", Status: 200, Result: []string{"{root}"},
			Summary: "Read a record", Doc: "404 for a record that does not exist or was deleted."},
		"PUT": {Name: "Update{kind}", Body: "{root}", Status: 200, Errors: append([]int{412}, writeErrors...),
			Summary: "Update a record",
			Doc:     "Only the fields sent change. 404 for a record that does not exist or was deleted. " + conditionalDoc},
		"DELETE": {Name: "Delete{kind}", Status: 200, Errors: []int{409, 412, 422}, Summary: "Delete a record",
			Doc: "A soft delete: search finds it by deleted_time. 409 when it is already deleted. " + conditionalDoc},
	},
	route.Fields: {"GET": {Name: "Get{kind}Fields", Status: 200, Result: []string{"{root}_fields"},
		Summary: "List the field definitions of the kind"}},
	route.Views: {"GET": {Name: "Get{kind}Views", Status: 200, Result: []string{"views"},
		Summary: "List the views (saved lists of records) of the kind"}},
	route.View: {"GET": {Name: "Get{kind}View", Status: 200, Result: []string{"view"},
		Summary: "Read the record summaries of a view"}},
	route.ViewSearch: {"GET": {Name: "Search{kind}View", Status: 200, Result: []string{"view"},
		Summary: "Search the records of a view"}},
	route.Search: {"GET": {Name: "Search{kind}", Status: 200, Result: []string{"search_results"},
		Summary: "Search the records of the kind"}},
	route.Related: {"GET": {Name: "Get{kind}Related", Status: 200, Result: []string{"relationships"},
		Summary: "List the records related to a record"}},
	route.History: {"GET": {Name: "Get{kind}FieldHistory", Status: 200, Result: []string{"history_items"},
		Summary: "Read the change history of one field of a record"}},
}

// Versions are the API versions: /api/{api_key} is version 1, /api2/{api_key} version 2.
var Versions = []int{1, 2}

// Base is the path of {base_url} in version v, with the {api_key} template.
func Base(v int) string {
	if v == 1 {
		return "/api/{api_key}"
	}
	return "/api" + strconv.Itoa(v) + "/{api_key}"
}

// Route is a route of the table with one of its methods and its Operation, made concrete: one version, one kind.
type Route struct {
	Operation
	Method      string
	Class       route.Class
	Gateway     bool // answered by the gateway itself, never by the core
	Version     int
	Kind        *Kind  // nil for a route of no kind
	Template    string // the whole path template, e.g. /api2/{api_key}/re/{id}
	OperationID string // e.g. v2GetRequirement
	Body        string // root element of the request body, "" for none
	Result      []string
}

// Routes expands the route table: every method of every route in every version that has it, for every kind it
// applies to, in the order of the table. A method without its Operation is left out (and fails
// TestEveryRouteDocumented).
func Routes() []Route {
	var rs []Route
	for _, v := range Versions {
		for _, rt := range route.Table() {
			if v < rt.MinVersion {
				continue
			}
			for _, m := range rt.Methods {
				op, ok := operations[rt.Class][m]
				if !ok {
					continue
				}
				r := Route{Operation: op, Method: m, Class: rt.Class, Gateway: rt.GatewayOnly, Version: v}
				if !strings.Contains(rt.Template, "{segment}") {
					rs = append(rs, concrete(r, rt.Template, nil))
					continue
				}
				for i := range Kinds {
					if v >= Kinds[i].MinVersion {
						rs = append(rs, concrete(r, rt.Template, &Kinds[i]))
					}
				}
			}
		}
	}
	return rs
}

// concrete fills in r for the path template (after the key) and the kind k.
func concrete(r Route, path string, k *Kind) Route {
	r.Kind, r.Body, r.Result = k, r.Operation.Body, r.Operation.Result
	kind := ""
	if k != nil {
		kind = k.Name
		path = strings.ReplaceAll(path, "{segment}", k.Segment)
		r.Body = strings.ReplaceAll(r.Body, "{root}", k.Root)
		r.Result = nil
		for _, res := range r.Operation.Result {
			r.Result = append(r.Result, strings.ReplaceAll(res, "{root}", k.Root))
		}
	}
	r.Template = Base(r.Version) + path
	r.OperationID = "v" + strconv.Itoa(r.Version) + strings.ReplaceAll(r.Name, "{kind}", kind)
	return r
}
